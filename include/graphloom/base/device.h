// Devices by name ("cpu", "cuda", "cuda:1"): the one place that turns a user's --device or
// device= into a c10::Device and refuses one this build or machine cannot use.
#pragma once

#include <c10/core/Device.h>

#include <string>

namespace graphloom {

// Parses "cpu", "cuda" or "cuda:N"; a bare "cuda" has no index (device_for_local_rank picks
// one).
// Throws OptionError(field) for anything else, and for a CUDA device when this build of
// graphloom's torch has no CUDA, the machine has no GPU, or N is past the last device: the
// message says which, and that "cpu" works everywhere.
c10::Device parse_device(const std::string& name, const char* field = "device");

// Throws OptionError(field) unless `device` is the CPU or an available CUDA device.
void require_device(c10::Device device, const char* field = "device");

// The number of CUDA devices this process can use (0 without a CUDA build of torch or a GPU).
int cuda_device_count();

// The device of one process among `local_rank`s on a machine with `device_count` GPUs: a CUDA
// device without an index becomes cuda:(local_rank mod device_count), one process per GPU as
// torchrun's LOCAL_RANK convention has it; a named index or the CPU stays as given.
c10::Device device_for_local_rank(c10::Device device, int local_rank, int device_count);

}  // namespace graphloom
