// Who this process is in a multi-process job: rank, world size, local rank and the rendezvous
// address, read from the conventions of torchrun, Slurm and Open MPI, so that `srun`, `mpirun`
// and a torchrun-style launcher (or `graphloom train --nproc`) all start graphloom trainers.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace graphloom::distributed {

struct ProcessEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;      // torchrun's default
  std::string source = "none";  // torchrun | slurm | openmpi | none (a single process)
  // torchrun's agent already hosts the store at MASTER_ADDR:MASTER_PORT
  // (TORCHELASTIC_USE_AGENT_STORE=True): every rank connects to it as a client, under the
  // key prefix of the current restart attempt.
  bool launcher_hosts_store = false;
  std::string store_prefix;
  // How many times the launcher restarted this job's trainers (GRAPHLOOM_RESTART_COUNT, or
  // torchrun's TORCHELASTIC_RESTART_COUNT): a restarted trainer resumes from its checkpoint.
  int restart_count = 0;

  bool distributed() const { return world_size > 1; }
};

// Reads the environment through `lookup` (returns nullptr for unset variables). Precedence:
// torchrun's RANK/WORLD_SIZE, then Slurm's SLURM_PROCID/SLURM_NTASKS, then Open MPI's
// OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE. MASTER_ADDR/MASTER_PORT apply to all of them; a
// multi-node job without MASTER_ADDR is an error (there is no safe guess). Malformed or
// inconsistent values throw graphloom::Error naming the variable.
ProcessEnvironment parse_process_environment(const std::function<const char*(const char*)>& lookup);

// parse_process_environment over this process's environment.
ProcessEnvironment process_environment();

// The variables (torchrun's names) a launcher gives a process so that process_environment()
// reads `env` back, plus OMP_NUM_THREADS: this machine's cores shared by the processes on its
// host (processes_on_host; 0: its env.local_world_size local processes).
std::map<std::string, std::string> launch_variables(const ProcessEnvironment& env,
                                                    int processes_on_host = 0);

}  // namespace graphloom::distributed
