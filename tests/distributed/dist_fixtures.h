// Runs a function once per rank, each in its own thread with its own ProcessGroup, all joined
// through a rendezvous on a free loopback port: multi-rank tests without processes.
#pragma once

#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/distributed/runtime/process_group.h"

namespace graphloom::testing {

inline void run_ranks(int world_size, const std::function<void(distributed::ProcessGroup&)>& body,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const int port = distributed::find_free_port();
  std::vector<std::exception_ptr> errors(world_size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        distributed::ProcessEnvironment env;
        env.rank = rank;
        env.world_size = world_size;
        env.master_port = port;
        // With a token, as launched jobs have: every group also runs the Gloo pair handshake.
        const auto group = distributed::ProcessGroup::connect(
            env, {.timeout = timeout, .token = "run-ranks-token"});
        body(*group);
      } catch (...) {
        errors[rank] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

// One in-process graph server per part of `partition_dir`, each on a free loopback port and
// checking `token`; `addresses[part]` is what DistGraph takes.
struct LoopbackServers {
  std::vector<std::unique_ptr<distributed::GraphServer>> servers;
  std::vector<std::vector<std::string>> addresses;
};

inline LoopbackServers serve_parts(const std::filesystem::path& partition_dir, int64_t parts,
                                   const std::string& token) {
  LoopbackServers out;
  for (int64_t part = 0; part < parts; ++part) {
    out.servers.push_back(std::make_unique<distributed::GraphServer>(distributed::ServerOptions{
        .partition_dir = partition_dir, .part = part, .address = "127.0.0.1:0", .token = token}));
    out.addresses.push_back({out.servers.back()->address()});
  }
  return out;
}

}  // namespace graphloom::testing
