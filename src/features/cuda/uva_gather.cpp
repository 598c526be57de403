// DeviceRows' zero-copy gather in a CUDA build (uva.h): the checked front of the kernel in
// gather_rows_kernel.cu. The host memory is registered by host_memory_on_device (base).
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "gather_rows_kernel.h"
#include "graphloom/base/error.h"
#include "uva.h"

namespace graphloom::features::cuda {

at::Tensor gather_mapped_rows(const at::Tensor& table, const at::Tensor& ids, c10::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  std::vector<int64_t> shape = table.sizes().vec();
  shape[0] = ids.numel();
  at::Tensor out = at::empty(shape, table.options());
  if (out.numel() == 0) return out;
  const int64_t row_bytes = table.numel() / table.size(0) * table.element_size();
  const cudaError_t status =
      launch_gather_rows(table.data_ptr(), ids.data_ptr<int64_t>(), ids.numel(), row_bytes,
                         out.data_ptr(), c10::cuda::getCurrentCUDAStream(device.index()));
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clears the error so that later calls do not report it
    throw Error(fmt::format("the zero-copy row gather kernel: {} (CUDA error {})",
                            cudaGetErrorString(status), static_cast<int>(status)));
  }
  return out;
}

}  // namespace graphloom::features::cuda
