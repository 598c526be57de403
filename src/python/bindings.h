// The parts of graphloom._C, one per file; module.cpp calls them in order. The Python classes
// in python/graphloom wrap these bindings: they take keyword arguments, check them, and build
// the typed options the library expects.
#pragma once

#include <pybind11/pybind11.h>

namespace graphloom::python {

void bind_dataset(pybind11::module_& module);  // CscGraph, Dataset, load/save
void bind_loader(pybind11::module_& module);   // NeighborSampler, MiniBatch, DataLoader
void bind_jobs(pybind11::module_& module);     // partition, convert
// DistGraph (before bind_loader, whose samplers and loaders take one)
void bind_distributed(pybind11::module_& module);

}  // namespace graphloom::python
