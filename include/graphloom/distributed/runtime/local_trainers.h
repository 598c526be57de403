// The trainers of a data-parallel job on this machine: `--nproc N` starts N copies of this
// program (like torch's mp.spawn), and a process started by a launcher (graphloom launch,
// torchrun, srun, mpirun) joins the job's process group.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graphloom/distributed/runtime/process_group.h"

namespace graphloom::distributed {

struct LocalTrainersOptions {
  int nproc = 2;                  // trainers, each with cores / nproc threads and rank 0..nproc-1
  int master_port = 0;            // rendezvous port on 127.0.0.1 (0: a free one)
  std::vector<std::string> argv;  // this program's command line, restarted without --nproc
  std::string token_file;         // the cluster token (else GRAPHLOOM_TOKEN), if any
  // Failures survived: all trainers start again (a new rendezvous) and resume from their
  // checkpoint (train_job.h).
  int max_restarts = 0;
};

// Starts the trainers and waits for them; returns the exit code of the failure that ended the
// job (0: all succeeded). A UsageError when this process was itself started by a launcher.
int run_local_trainers(const LocalTrainersOptions& options);

// This process's group when a launcher started it (RANK/WORLD_SIZE...), else null. Ranks other
// than 0 then log only warnings and errors, each line tagged with the rank. `timeout_seconds`:
// for the rendezvous and every collective.
std::unique_ptr<ProcessGroup> join_launched_job(double timeout_seconds,
                                                const std::string& token_file);

}  // namespace graphloom::distributed
