// make_nccl_backend: c10d's NCCL backend, for the collectives on CUDA tensors (gradients of a
// model on a GPU), behind a declaration that needs no CUDA header. A CUDA build compiles
// nccl_backend.cpp; a build without CUDA compiles nccl_unavailable.cpp, which refuses with an
// OptionError naming `option`. Callers never test which one they got.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>

namespace graphloom::distributed {

// Connects rank `rank` of `world_size` through `store` (every rank calls it). NCCL makes its
// communicators at the first collective, on the device of that collective's tensors.
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    std::chrono::milliseconds timeout,
                                                    const std::string& option);

}  // namespace graphloom::distributed
