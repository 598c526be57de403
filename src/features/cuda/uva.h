// The zero-copy row gather of DeviceRows (internal to the features module). A CUDA build
// compiles uva_gather.cpp; a build without CUDA compiles uva_unavailable.cpp, whose function
// refuses with OptionError. Callers never test which one they got.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace graphloom::features::cuda {

// Rows `ids` (int64, on `device`, each in [0, table.size(0))) of `table`, a contiguous tensor
// on `device` aliasing pinned host memory (host_memory_on_device), read by a kernel on
// `device` through zero-copy access: [ids.numel(), row...] there.
at::Tensor gather_mapped_rows(const at::Tensor& table, const at::Tensor& ids, c10::Device device);

}  // namespace graphloom::features::cuda
