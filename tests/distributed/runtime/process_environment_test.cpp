// Rank/world detection from torchrun, Slurm and Open MPI variables.
#include "graphloom/distributed/runtime/process_environment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <thread>

#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

ProcessEnvironment parse(const std::map<std::string, std::string>& vars) {
  return parse_process_environment([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

// Rank, world, local rank and size, and master address and port all equal.
void expect_same_place(const ProcessEnvironment& env, const ProcessEnvironment& expected) {
  EXPECT_EQ(env.rank, expected.rank);
  EXPECT_EQ(env.world_size, expected.world_size);
  EXPECT_EQ(env.local_rank, expected.local_rank);
  EXPECT_EQ(env.local_world_size, expected.local_world_size);
  EXPECT_EQ(env.master_addr, expected.master_addr);
  EXPECT_EQ(env.master_port, expected.master_port);
}

TEST(ProcessEnvironment, SingleProcessWithoutVariables) {
  const ProcessEnvironment env = parse({});
  EXPECT_FALSE(env.distributed());
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.source, "none");
}

TEST(ProcessEnvironment, Torchrun) {
  const ProcessEnvironment env = parse({{"RANK", "3"},
                                        {"WORLD_SIZE", "4"},
                                        {"LOCAL_RANK", "1"},
                                        {"LOCAL_WORLD_SIZE", "2"},
                                        {"MASTER_ADDR", "10.0.0.5"},
                                        {"MASTER_PORT", "1234"}});
  EXPECT_EQ(env.source, "torchrun");
  expect_same_place(env, {.rank = 3,
                          .world_size = 4,
                          .local_rank = 1,
                          .local_world_size = 2,
                          .master_addr = "10.0.0.5",
                          .master_port = 1234});
}

TEST(ProcessEnvironment, TorchrunAgentStore) {
  const ProcessEnvironment env = parse({{"RANK", "0"},
                                        {"WORLD_SIZE", "2"},
                                        {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                        {"TORCHELASTIC_RESTART_COUNT", "3"}});
  EXPECT_TRUE(env.launcher_hosts_store);  // rank 0 must not bind MASTER_PORT itself
  EXPECT_EQ(env.store_prefix, "/worker/attempt_3");
  EXPECT_FALSE(parse({{"RANK", "0"}, {"WORLD_SIZE", "2"}}).launcher_hosts_store);
}

TEST(ProcessEnvironment, SlurmAndOpenMpi) {
  const ProcessEnvironment slurm =
      parse({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "1"}});
  EXPECT_EQ(slurm.source, "slurm");
  EXPECT_EQ(slurm.rank, 1);
  EXPECT_EQ(slurm.local_rank, 1);
  EXPECT_EQ(slurm.local_world_size, 2);  // one machine: MASTER_ADDR may default to loopback
  EXPECT_EQ(slurm.master_addr, "127.0.0.1");

  const ProcessEnvironment mpi = parse({{"OMPI_COMM_WORLD_RANK", "5"},
                                        {"OMPI_COMM_WORLD_SIZE", "8"},
                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                        {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                        {"MASTER_ADDR", "node0"}});
  EXPECT_EQ(mpi.source, "openmpi");
  EXPECT_EQ(mpi.rank, 5);
  EXPECT_EQ(mpi.world_size, 8);
  EXPECT_EQ(mpi.local_world_size, 4);
  EXPECT_EQ(mpi.master_addr, "node0");
}

TEST(ProcessEnvironment, TorchrunWinsOverSlurm) {
  const ProcessEnvironment env =
      parse({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}});
  EXPECT_EQ(env.source, "torchrun");
  EXPECT_EQ(env.rank, 0);
}

TEST(ProcessEnvironment, BadValuesNameTheVariable) {
  using testing::error_of;
  EXPECT_NE(error_of([] {
              parse({{"RANK", "x"}, {"WORLD_SIZE", "2"}});
            }).find("RANK='x'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse({{"RANK", "2"}, {"WORLD_SIZE", "2"}});
            }).find("not below"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse({{"WORLD_SIZE", "2"}});
            }).find("both RANK and WORLD_SIZE"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse({{"MASTER_PORT", "70000"}});
            }).find("MASTER_PORT"),
            std::string::npos);
  // Several machines (local world < world) and no MASTER_ADDR: no safe default.
  EXPECT_NE(error_of([] {
              parse({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}});
            }).find("MASTER_ADDR"),
            std::string::npos);
}

// A launched process reads its place back, and gets its share of this host's cores: those of
// its own machine's trainers, or of every process the launcher puts on this host.
TEST(ProcessEnvironment, LaunchVariablesRoundTripAndShareTheCores) {
  const ProcessEnvironment env{.rank = 3,
                               .world_size = 4,
                               .local_rank = 1,
                               .local_world_size = 2,
                               .master_addr = "10.0.0.1",
                               .master_port = 29600};
  const auto variables = launch_variables(env);
  expect_same_place(parse(variables), env);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(variables.at("OMP_NUM_THREADS"), std::to_string(std::max(1, cores / 2)));
  EXPECT_EQ(launch_variables(env, 4).at("OMP_NUM_THREADS"), std::to_string(std::max(1, cores / 4)));
  EXPECT_EQ(launch_variables(env, 1000).at("OMP_NUM_THREADS"), "1");
}

}  // namespace
}  // namespace graphloom::distributed
