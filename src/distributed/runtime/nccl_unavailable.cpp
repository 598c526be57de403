// make_nccl_backend in a build without CUDA: a refusal that says how to get NCCL.
#include "nccl_backend.h"

#include "graphloom/base/error.h"

namespace graphloom::distributed {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>&, int,
                                                    int, std::chrono::milliseconds,
                                                    const std::string& option) {
  throw OptionError(option,
                    "nccl needs graphloom's CUDA build (scripts/build-cuda.sh, a CUDA torch); "
                    "this build has no CUDA code (use gloo)");
}

}  // namespace graphloom::distributed
