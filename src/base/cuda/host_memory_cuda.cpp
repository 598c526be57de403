// host_memory.h in a CUDA build: cudaHostRegister'd ranges, and device tensors that alias them
// and unregister the range when their storage goes.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>

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

// What an alias keeps alive: the host tensor and, when graphloom registered its memory, the
// registration. The last alias to go waits for the device (a kernel still queued may read the
// memory), then unregisters what it registered, then lets the host memory go.
struct Mapping {
  at::Tensor host;
  void* registered = nullptr;  // the start of graphloom's own registration, or null
  std::size_t bytes = 0;
  std::shared_ptr<Mapping> within;  // the registration this range lies in, if another's
  ~Mapping() {
    if (cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
    if (registered != nullptr && cudaHostUnregister(registered) != cudaSuccess) {
      (void)cudaGetLastError();
    }
  }
};

// graphloom's live registrations by start address: a later request inside one shares it (and
// so keeps it registered), a request that overlaps one without lying inside is copied instead.
struct Registry {
  std::mutex mutex;
  std::map<const char*, std::weak_ptr<Mapping>> by_start;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

// The live registration holding [first, first + bytes), or null; sets `overlaps` when a live
// one overlaps the range without holding it. Call with the registry's mutex held.
std::shared_ptr<Mapping> registration_holding(Registry& r, const char* first, std::size_t bytes,
                                              bool& overlaps) {
  overlaps = false;
  for (auto it = r.by_start.begin(); it != r.by_start.end();) {
    std::shared_ptr<Mapping> live = it->second.lock();
    if (live == nullptr) {
      it = r.by_start.erase(it);
      continue;
    }
    const char* start = it->first;
    const char* end = start + live->bytes;
    if (first >= start && first + bytes <= end) return live;
    overlaps = overlaps || (first < end && first + bytes > start);
    ++it;
  }
  return nullptr;
}

// A device tensor over `device_data`, shaped and typed as `host`, keeping `mapping` alive.
at::Tensor alias_on_device(const at::Tensor& host, void* device_data, c10::Device device,
                           std::shared_ptr<Mapping> mapping) {
  return at::from_blob(
      device_data, host.sizes(), host.strides(), [mapping = std::move(mapping)](void*) {},
      host.options().device(device), device);
}

// `table` copied into torch's pinned memory (mapped into every device on this system).
at::Tensor pinned_copy_on_device(const at::Tensor& table, c10::Device device) {
  auto mapping = std::make_shared<Mapping>();
  mapping->host = table.pin_memory();
  void* mapped = mapped_address(mapping->host.data_ptr());
  GL_CHECK(mapped != nullptr, "pinned memory from torch is not mapped into the device");
  return alias_on_device(mapping->host, mapped, device, std::move(mapping));
}

}  // namespace

at::Tensor host_memory_on_device(const at::Tensor& host, c10::Device device, const char* field) {
  GL_CHECK(host.defined() && host.is_cpu(), "host_memory_on_device needs a CPU tensor");
  require_device(device, field);
  if (device.is_cpu()) return host;
  if (!device.has_index()) device = c10::Device(device.type(), c10::cuda::current_device());
  const c10::cuda::CUDAGuard guard(device);
  const at::Tensor table = host.contiguous();
  if (table.numel() == 0) return at::empty(table.sizes(), table.options().device(device));
  const std::size_t bytes =
      static_cast<std::size_t>(table.numel()) * static_cast<std::size_t>(table.element_size());
  auto* first = static_cast<char*>(table.data_ptr());
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  bool overlaps = false;
  if (std::shared_ptr<Mapping> shared = registration_holding(r, first, bytes, overlaps)) {
    auto mapping = std::make_shared<Mapping>();  // keeps `table` and the registration alive
    mapping->host = table;
    mapping->within = std::move(shared);
    void* mapped = mapped_address(first);
    GL_CHECK(mapped != nullptr, "registered host memory is not mapped into the device");
    return alias_on_device(table, mapped, device, std::move(mapping));
  }
  if (overlaps) return pinned_copy_on_device(table, device);
  // Registered by someone else, wholly (torch's pinned allocator, whose block lives as long as
  // `table`): used as is.
  if (void* mapped = mapped_address(first);
      mapped != nullptr && mapped_address(first + bytes - 1)) {
    auto mapping = std::make_shared<Mapping>();
    mapping->host = table;
    return alias_on_device(table, mapped, device, std::move(mapping));
  }
  if (!register_range(first, bytes, device)) return pinned_copy_on_device(table, device);
  auto mapping = std::make_shared<Mapping>();
  mapping->host = table;
  mapping->registered = first;
  mapping->bytes = bytes;
  r.by_start[first] = mapping;
  void* device_data = nullptr;
  check(cudaHostGetDevicePointer(&device_data, first, 0),
        "cudaHostGetDevicePointer of registered host memory");
  return alias_on_device(table, device_data, device, std::move(mapping));
}

int64_t free_device_bytes(c10::Device device) {
  require_device(device);
  const c10::cuda::CUDAGuard guard(device);
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return static_cast<int64_t>(free);
}

}  // namespace graphloom
