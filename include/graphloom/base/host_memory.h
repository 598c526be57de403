// Host memory that a CUDA device reads in place (zero-copy access over the bus, "UVA"): the
// one place that registers host memory with CUDA and hands out device tensors aliasing it.
// Feature matrices (features::DeviceRows) and the sampler's CSC (sampling::
// TensorNeighborSource) are placed "pinned" through it. A build without CUDA compiles
// cuda/host_memory_unavailable.cpp, which refuses a CUDA device by name.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>

namespace graphloom {

// A tensor on `device` whose storage is the memory of `host` (a CPU tensor, made contiguous:
// process memory, a memory-mapped file or shared memory). Kernels on the device read it over
// the bus without a copy. The memory stays registered as pinned and mapped while the returned
// tensor, or any view of it, lives (a range inside one graphloom registered earlier shares
// it), and keeps `host` alive as long; when the last view goes, it waits for the device before
// unregistering. Memory that torch's pinned allocator made is used as it is. Where the range
// overlaps another registration without lying inside it (a neighbour on its first or last
// page), the tensor is copied once into pinned memory.
//
// For the CPU device it returns `host` itself: pinned memory is plain memory there, so code
// written over such tensors runs, and is tested, on the CPU.
//
// Throws OptionError(field) for a CUDA device that this build or machine cannot use, and
// graphloom::Error when CUDA refuses the registration (the message says why).
at::Tensor host_memory_on_device(const at::Tensor& host, c10::Device device, const char* field);

// Free memory on a CUDA device in bytes (cudaMemGetInfo). OptionError without CUDA.
int64_t free_device_bytes(c10::Device device);

}  // namespace graphloom
