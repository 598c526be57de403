// DeviceRows' zero-copy gather in a build without CUDA: refuses by name. DeviceRows only
// reaches it for a CUDA device, which require_device already refuses in such a build; this is
// the second line.
#include "graphloom/base/error.h"
#include "uva.h"

namespace graphloom::features::cuda {

at::Tensor gather_mapped_rows(const at::Tensor&, const at::Tensor&, c10::Device) {
  throw OptionError("feature_placement",
                    "pinned (zero-copy) features need graphloom built with CUDA (README: the "
                    "CUDA build)");
}

}  // namespace graphloom::features::cuda
