// Rank/world detection from launcher environment variables.
#include "graphloom/distributed/runtime/process_environment.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <thread>

#include "graphloom/base/error.h"

namespace graphloom::distributed {
namespace {

using Lookup = std::function<const char*(const char*)>;

std::optional<int> integer(const Lookup& lookup, const char* name, int min, int max) {
  const char* text = lookup(name);
  if (text == nullptr) return std::nullopt;
  const std::string_view view(text);
  int value = 0;
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  GL_CHECK(error == std::errc() && end == view.data() + view.size() && value >= min && value <= max,
           "environment variable {}='{}' is not an integer in [{}, {}]", name, view, min, max);
  return value;
}

struct Convention {
  const char* name;
  const char* rank;
  const char* world;
  const char* local_rank;
  const char* local_world;
};

// Slurm has no local world size variable for heterogeneous jobs; SLURM_NTASKS_PER_NODE is set
// when tasks are spread evenly, which is the case graphloom supports.
constexpr Convention kConventions[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
};

}  // namespace

ProcessEnvironment parse_process_environment(const Lookup& lookup) {
  constexpr int kMaxWorld = 1 << 20;
  constexpr int kMaxRestarts = 1 << 20;
  ProcessEnvironment env;
  for (const Convention& convention : kConventions) {
    if (lookup(convention.rank) == nullptr && lookup(convention.world) == nullptr) continue;
    const std::optional<int> rank = integer(lookup, convention.rank, 0, kMaxWorld);
    const std::optional<int> world = integer(lookup, convention.world, 1, kMaxWorld);
    GL_CHECK(rank && world, "{} launch: both {} and {} must be set", convention.name,
             convention.rank, convention.world);
    GL_CHECK(*rank < *world, "{}={} is not below {}={}", convention.rank, *rank, convention.world,
             *world);
    env.rank = *rank;
    env.world_size = *world;
    env.local_rank = integer(lookup, convention.local_rank, 0, kMaxWorld).value_or(*rank);
    env.local_world_size = integer(lookup, convention.local_world, 1, kMaxWorld).value_or(*world);
    GL_CHECK(env.local_rank < env.local_world_size && env.local_world_size <= env.world_size,
             "{} launch: local rank {} / local world size {} inconsistent with world size {}",
             convention.name, env.local_rank, env.local_world_size, env.world_size);
    env.source = convention.name;
    break;
  }
  if (const char* addr = lookup("MASTER_ADDR"); addr != nullptr && *addr != '\0') {
    env.master_addr = addr;
  } else {
    GL_CHECK(env.local_world_size == env.world_size,
             "a {}-process job spread over several machines needs MASTER_ADDR (the address of "
             "rank 0)",
             env.world_size);
  }
  env.master_port = integer(lookup, "MASTER_PORT", 1, 65535).value_or(env.master_port);
  const int torchrun_restarts =
      integer(lookup, "TORCHELASTIC_RESTART_COUNT", 0, kMaxRestarts).value_or(0);
  env.restart_count =
      integer(lookup, "GRAPHLOOM_RESTART_COUNT", 0, kMaxRestarts).value_or(torchrun_restarts);
  if (const char* agent = lookup("TORCHELASTIC_USE_AGENT_STORE");
      agent != nullptr && std::string_view(agent) == "True") {
    env.launcher_hosts_store = true;
    env.store_prefix = fmt::format("/worker/attempt_{}", torchrun_restarts);
  }
  return env;
}

std::map<std::string, std::string> launch_variables(const ProcessEnvironment& env,
                                                    int processes_on_host) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int sharing = processes_on_host > 0 ? processes_on_host : env.local_world_size;
  const int threads = std::max(1, cores / sharing);
  return {{"RANK", std::to_string(env.rank)},
          {"WORLD_SIZE", std::to_string(env.world_size)},
          {"LOCAL_RANK", std::to_string(env.local_rank)},
          {"LOCAL_WORLD_SIZE", std::to_string(env.local_world_size)},
          {"MASTER_ADDR", env.master_addr},
          {"MASTER_PORT", std::to_string(env.master_port)},
          {"OMP_NUM_THREADS", std::to_string(threads)}};
}

ProcessEnvironment process_environment() {
  return parse_process_environment([](const char* name) { return std::getenv(name); });
}

}  // namespace graphloom::distributed
