// host_memory.h in a CUDA build: cudaHostRegister'd ranges, and device tensors that alias them
// and unregister the range when their storage goes.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <memory>

#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/base/host_memory.h"

namespace graphloom {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clears the error so that later calls do not report it
    throw Error(fmt::format("{}: {} (CUDA error {})", what, cudaGetErrorString(status),
                            static_cast<int>(status)));
  }
}

// The device address of a registered host byte, or null when the byte is not registered.
void* mapped_address(const void* host) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return attributes.type == cudaMemoryTypeHost ? attributes.devicePointer : nullptr;
}

// Registers [data, data + bytes) for every device, mapped; read-only where the device supports
// it, which read-only mappings (a feature file mapped PROT_READ) need. Returns false, without
// registering, when the range overlaps one that is already registered.
bool register_range(void* data, std::size_t bytes, c10::Device device) {
  int read_only = 0;
  check(
      cudaDeviceGetAttribute(&read_only, cudaDevAttrHostRegisterReadOnlySupported, device.index()),
      "cudaDeviceGetAttribute(HostRegisterReadOnlySupported)");
  const unsigned flags = cudaHostRegisterMapped | cudaHostRegisterPortable |
                         (read_only != 0 ? cudaHostRegisterReadOnly : 0u);
  const cudaError_t status = cudaHostRegister(data, bytes, flags);
  if (status == cudaErrorHostMemoryAlreadyRegistered) {
    (void)cudaGetLastError();
    return false;
  }
  check(status, "cudaHostRegister (pinning host memory for zero-copy access)");
  return true;
}

// A device tensor over `bytes` at `device_data`, shaped and typed as `host`; `keep` lives as
// long as its storage.
at::Tensor alias_on_device(const at::Tensor& host, void* device_data, c10::Device device,
                           std::shared_ptr<void> keep) {
  return at::from_blob(
      device_data, host.sizes(), host.strides(), [keep = std::move(keep)](void*) {},
      host.options().device(device), device);
}

}  // namespace

at::Tensor host_memory_on_device(const at::Tensor& host, c10::Device device, const char* field) {
  GL_CHECK(host.defined() && host.is_cpu(), "host_memory_on_device needs a CPU tensor");
  require_device(device, field);
  if (device.is_cpu()) return host;
  if (!device.has_index()) device = c10::Device(device.type(), c10::cuda::current_device());
  const c10::cuda::CUDAGuard guard(device);
  at::Tensor table = host.contiguous();
  if (table.numel() == 0) return at::empty(table.sizes(), table.options().device(device));
  const std::size_t bytes =
      static_cast<std::size_t>(table.numel()) * static_cast<std::size_t>(table.element_size());
  auto* first = static_cast<char*>(table.data_ptr());
  // Memory registered already, wholly (torch's pinned allocator, an earlier view): used as is.
  if (void* mapped = mapped_address(first);
      mapped != nullptr && mapped_address(first + bytes - 1)) {
    return alias_on_device(table, mapped, device, std::make_shared<at::Tensor>(table));
  }
  if (!register_range(first, bytes, device)) {
    // Part of the range belongs to another registration: pinned memory of its own instead.
    table = table.pin_memory();
    void* mapped = mapped_address(table.data_ptr());
    GL_CHECK(mapped != nullptr, "pinned memory from torch is not mapped into the device");
    return alias_on_device(table, mapped, device, std::make_shared<at::Tensor>(table));
  }
  // Unregisters when the last alias goes, before `table` (which the deleter owns) is freed.
  std::shared_ptr<void> registration(new at::Tensor(table), [first](void* owned) {
    if (cudaHostUnregister(first) != cudaSuccess) (void)cudaGetLastError();
    delete static_cast<at::Tensor*>(owned);
  });
  void* device_data = nullptr;
  check(cudaHostGetDevicePointer(&device_data, first, 0),
        "cudaHostGetDevicePointer of registered host memory");
  return alias_on_device(table, device_data, device, std::move(registration));
}

int64_t free_device_bytes(c10::Device device) {
  require_device(device);
  const c10::cuda::CUDAGuard guard(device);
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return static_cast<int64_t>(free);
}

}  // namespace graphloom
