// DeviceRows' CUDA seam in a CUDA build (uva.h): host-memory registration, the free-memory
// query, and the checked front of the zero-copy gather kernel (gather_rows_kernel.cu).
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "gather_rows_kernel.h"
#include "graphloom/base/error.h"
#include "uva.h"

namespace graphloom::features::cuda {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clears the error so that later calls do not report it
    throw Error(fmt::format("{}: {} (CUDA error {})", what, cudaGetErrorString(status),
                            static_cast<int>(status)));
  }
}

}  // namespace

bool register_host_memory(void* data, std::size_t bytes) {
  const cudaError_t status = cudaHostRegister(data, bytes, cudaHostRegisterMapped);
  if (status == cudaErrorHostMemoryAlreadyRegistered) {
    (void)cudaGetLastError();
    return false;
  }
  check(status, "cudaHostRegister of the feature matrix");
  return true;
}

void unregister_host_memory(void* data) {
  // Called from a destructor: nothing to report to, so only clear the error.
  if (cudaHostUnregister(data) != cudaSuccess) (void)cudaGetLastError();
}

at::Tensor gather_registered_rows(const at::Tensor& table, const at::Tensor& ids,
                                  c10::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  std::vector<int64_t> shape = table.sizes().vec();
  shape[0] = ids.numel();
  at::Tensor out = at::empty(shape, table.options().device(device));
  if (out.numel() == 0) return out;
  void* device_table = nullptr;
  check(cudaHostGetDevicePointer(&device_table, table.data_ptr(), 0),
        "cudaHostGetDevicePointer of the registered feature matrix");
  const int64_t row_bytes = table.numel() / table.size(0) * table.element_size();
  check(launch_gather_rows(device_table, ids.data_ptr<int64_t>(), ids.numel(), row_bytes,
                           out.data_ptr(), c10::cuda::getCurrentCUDAStream(device.index())),
        "the zero-copy row gather kernel");
  return out;
}

int64_t free_device_bytes(c10::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return static_cast<int64_t>(free);
}

}  // namespace graphloom::features::cuda
