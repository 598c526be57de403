// make_gloo_backend: c10d's Gloo backend, behind a declaration that needs no Gloo header.
// ProcessGroupGloo.hpp includes Gloo's headers, which the torch wheel does not ship; only
// gloo_backend.cpp includes it (docs/toolchain.md, "Gloo").
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>

namespace graphloom::distributed {

struct GlooBackendOptions {
  std::chrono::milliseconds timeout = std::chrono::seconds(120);
  int threads = 2;  // Gloo's threads running collectives
  // Where this process's Gloo sockets listen: a network interface (GLOO_SOCKET_IFNAME's
  // meaning) if set, else a host name or address, else Gloo's default (the host name's address).
  std::string interface;
  std::string hostname;
};

// Connects rank `rank` of `world_size` through `store` (every rank calls it; returns when all
// have). Throws libtorch's exceptions (a timeout, a peer that did not come).
c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int world_size,
                                                    const GlooBackendOptions& options);

}  // namespace graphloom::distributed
