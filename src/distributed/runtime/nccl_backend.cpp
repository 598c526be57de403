// The one translation unit that includes ProcessGroupNCCL.hpp (compiled in CUDA builds only,
// with USE_C10D_NCCL and the wheel's nccl.h): the backend lives in libtorch_cuda, next to the
// NCCL that torch loads, so the process holds one NCCL.
#include "nccl_backend.h"

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace graphloom::distributed {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    std::chrono::milliseconds timeout,
                                                    const std::string& /*option*/) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
}

}  // namespace graphloom::distributed
