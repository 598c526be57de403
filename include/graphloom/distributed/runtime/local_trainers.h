// The trainers of a data-parallel job on this machine: `--nproc N` starts N copies of this
// program (like torch's mp.spawn), and a process started by a launcher (graphloom launch,
// torchrun, srun, mpirun) joins the job's process group.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graphloom/distributed/runtime/process_group.h"

namespace graphloom::distributed {

struct DataParallelOptions {
  // > 1: start this many trainers, ranks 0..nproc-1, each with cores / nproc threads.
  int nproc = 1;
  int master_port = 0;            // rendezvous port of those trainers on 127.0.0.1 (0: a free one)
  std::vector<std::string> argv;  // this program's command line, restarted without --nproc
  std::string token_file;         // the cluster token (else GRAPHLOOM_TOKEN), if any
  // Failures survived: all trainers start again (a new rendezvous) and resume from their
  // checkpoint (train_job.h).
  int max_restarts = 0;
  double timeout_seconds = 120;  // for the rendezvous and every collective
};

// Starts `nproc` trainers and waits for them; returns the exit code of the failure that ended
// the job (0: all succeeded). A UsageError when this process was itself started by a launcher.
int run_local_trainers(const DataParallelOptions& options);

// This process's group when a launcher started it (RANK/WORLD_SIZE...), else null. Ranks other
// than 0 then log only warnings and errors, each line tagged with the rank. `timeout_seconds`:
// for the rendezvous and every collective.
std::unique_ptr<ProcessGroup> join_launched_job(double timeout_seconds,
                                                const std::string& token_file);

// This process's part of a data-parallel job (`train`, `bench train`): with nproc > 1 it starts
// the trainers, each running this same command line, and returns the first failure's exit
// code; otherwise it runs `job` with the launched job's group (join_launched_job), or with
// nullptr when no launcher started this process, and returns 0.
int run_data_parallel(const DataParallelOptions& options,
                      const std::function<void(ProcessGroup*)>& job);

}  // namespace graphloom::distributed
