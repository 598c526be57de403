// DeviceRows' CUDA seam in a build without CUDA: every call refuses by name. DeviceRows only
// reaches it for a CUDA device, which require_device already refuses in such a build; these
// are the second line.
#include <fmt/format.h>

#include "graphloom/base/error.h"
#include "uva.h"

namespace graphloom::features::cuda {
namespace {

[[noreturn]] void refuse(const char* what) {
  throw OptionError(
      "feature_placement",
      fmt::format("{} needs graphloom built with CUDA (README: the CUDA build)", what));
}

}  // namespace

bool register_host_memory(void*, std::size_t) { refuse("pinned (zero-copy) features"); }
void unregister_host_memory(void*) { refuse("pinned (zero-copy) features"); }
at::Tensor gather_registered_rows(const at::Tensor&, const at::Tensor&, c10::Device) {
  refuse("pinned (zero-copy) features");
}
int64_t free_device_bytes(c10::Device) { refuse("a CUDA device's memory"); }

}  // namespace graphloom::features::cuda
