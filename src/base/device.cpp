// Device names and availability (device.h). The CUDA hooks answer in every build: a CPU-only
// torch reports no devices rather than failing.
#include "graphloom/base/device.h"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>

#include "graphloom/base/error.h"

namespace graphloom {

int cuda_device_count() {
  return at::detail::getCUDAHooks().hasCUDA()
             ? static_cast<int>(at::detail::getCUDAHooks().deviceCount())
             : 0;
}

void require_device(c10::Device device, const char* field) {
  if (device.is_cpu()) return;
  if (!device.is_cuda()) {
    throw OptionError(field, fmt::format("must be cpu or cuda[:N], got {}", device.str()));
  }
  if (!at::detail::getCUDAHooks().isBuilt()) {
    throw OptionError(field, fmt::format("{}: this graphloom is built against a CPU-only torch; "
                                         "rebuild it against a CUDA torch (README: the CUDA "
                                         "build) or pass cpu",
                                         device.str()));
  }
  const int count = cuda_device_count();
  if (count == 0) {
    throw OptionError(field, fmt::format("{}: no CUDA device is visible on this machine (check "
                                         "nvidia-smi and CUDA_VISIBLE_DEVICES) or pass cpu",
                                         device.str()));
  }
  if (device.has_index() && device.index() >= count) {
    throw OptionError(field, fmt::format("{}: this machine has {} CUDA device(s), cuda:0 to "
                                         "cuda:{}",
                                         device.str(), count, count - 1));
  }
}

c10::Device parse_device(const std::string& name, const char* field) {
  const bool cuda = name == "cuda" || name.rfind("cuda:", 0) == 0;
  if (name != "cpu" && !cuda) {
    throw OptionError(field, fmt::format("must be cpu, cuda or cuda:N, got '{}'", name));
  }
  c10::Device device(c10::DeviceType::CPU);
  try {
    device = c10::Device(name);
  } catch (const c10::Error&) {
    throw OptionError(field, fmt::format("must be cpu, cuda or cuda:N, got '{}'", name));
  }
  require_device(device, field);
  return device;
}

c10::Device device_for_local_rank(c10::Device device, int local_rank, int device_count) {
  if (!device.is_cuda() || device.has_index() || device_count <= 0) return device;
  return {c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(local_rank % device_count)};
}

}  // namespace graphloom
