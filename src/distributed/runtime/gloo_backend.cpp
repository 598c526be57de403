// The one translation unit that includes ProcessGroupGloo.hpp. It is compiled against Debian's
// libgloo-dev headers, an older Gloo than the one built into libtorch_cpu; that is safe because
// this file names Gloo's types only through std::shared_ptr (the devices libtorch creates) and
// calls no Gloo function: every object is made and used inside libtorch. Debian's libgloo is
// not linked: the process holds one Gloo, libtorch's.
#include "gloo_backend.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

namespace graphloom::distributed {

c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    const GlooBackendOptions& options) {
  auto gloo_options = c10d::ProcessGroupGloo::Options::create(options.timeout);
  gloo_options->threads = options.threads;
  if (!options.interface.empty()) {
    gloo_options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForInterface(options.interface));
  } else if (!options.hostname.empty()) {
    gloo_options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname(options.hostname));
  } else {
    gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, gloo_options);
}

}  // namespace graphloom::distributed
