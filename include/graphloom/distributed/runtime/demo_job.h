// The main job (`graphloom demo`, scripts/main.sh): the whole system on one machine. It
// generates a graph whose labels the features alone do not give away, partitions it with METIS,
// starts two loopback "machines" each with a main and a backup graph server and a trainer, and
// trains GraphSAGE data-parallel through the servers; then it prints what a user would ask
// first: accuracy (against the features alone), seeds/s, time per stage, and where the
// partition, the checkpoint and the metrics went.
#pragma once

#include <cstdint>
#include <filesystem>

namespace graphloom::distributed {

struct DemoOptions {
  std::filesystem::path out = "graphloom-demo";  // dataset, partition, checkpoint, metrics
  bool force = false;                            // replace `out` if it exists
  int64_t num_nodes = 1000000;
  int64_t epochs = 10;
  int machines = 2;             // loopback machines, one part each
  int servers_per_machine = 2;  // a main server and its backups, sharing the part's memory
  uint64_t seed = 0;
};

// Runs the job; returns the launch's exit code (0: success). Ctrl-C (SIGINT) stops every
// process of the job and removes its shared memory; what was written under `out` stays.
int run_demo(const DemoOptions& options);

}  // namespace graphloom::distributed
