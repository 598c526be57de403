// The CUDA side of DeviceRows (internal to the features module). A CUDA build compiles
// uva_gather.cu; a build without CUDA compiles uva_unavailable.cpp, whose functions refuse
// with OptionError. Callers never test which one they got.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstddef>
#include <cstdint>

namespace graphloom::features::cuda {

// Registers [data, data + bytes) as pinned host memory mapped into every device's address
// space (cudaHostRegister). Returns false when it already is (torch's pinned allocator, an
// earlier registration): the caller then must not unregister it.
bool register_host_memory(void* data, std::size_t bytes);
void unregister_host_memory(void* data);

// Rows `ids` (int64, on `device`, each in [0, table.size(0))) of a registered, contiguous host
// table, read by a kernel on `device` through zero-copy access: [ids.numel(), row...] there.
at::Tensor gather_registered_rows(const at::Tensor& table, const at::Tensor& ids,
                                  c10::Device device);

// Free memory on `device` in bytes (cudaMemGetInfo).
int64_t free_device_bytes(c10::Device device);

}  // namespace graphloom::features::cuda
