// host_memory.h in a build without CUDA: the CPU device gets its tensor back; a CUDA device
// never gets here (require_device refuses it by name).
#include "graphloom/base/device.h"
#include "graphloom/base/error.h"
#include "graphloom/base/host_memory.h"

namespace graphloom {

at::Tensor host_memory_on_device(const at::Tensor& host, c10::Device device, const char* field) {
  GL_CHECK(host.defined() && host.is_cpu(), "host_memory_on_device needs a CPU tensor");
  require_device(device, field);
  GL_CHECK(device.is_cpu(), "host_memory_on_device: no CUDA in this build");
  return host;
}

int64_t free_device_bytes(c10::Device device) {
  require_device(device);
  throw OptionError("device", "a CUDA device's memory needs graphloom built with CUDA");
}

}  // namespace graphloom
