// Devices by name ("cpu", "cuda", "cuda:1"): the one place that turns a user's --device or
// device= into a c10::Device and refuses one this build or machine cannot use.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace graphloom {

// Parses "cpu", "cuda" or "cuda:N" (the current CUDA device for a bare "cuda" is device 0).
// Throws OptionError(field) for anything else, and for a CUDA device when this build of
// graphloom's torch has no CUDA, the machine has no GPU, or N is past the last device: the
// message says which, and that "cpu" works everywhere.
c10::Device parse_device(const std::string& name, const char* field = "device");

// Throws OptionError(field) unless `device` is the CPU or an available CUDA device.
void require_device(c10::Device device, const char* field = "device");

// The number of CUDA devices this process can use (0 without a CUDA build of torch or a GPU).
int cuda_device_count();

}  // namespace graphloom
