// The data-parallel flags of `train` and `bench train`; --nproc and joining a launched job are
// the distributed runtime's (distributed/runtime/local_trainers.h).
#include "commands.h"
#include "flag_checks.h"

namespace graphloom::cli {

void add_data_parallel_flags(CLI::App* cmd, distributed::DataParallelOptions& flags,
                             train::TrainOptions& o) {
  const HelpGroup group(cmd, "Data-parallel training");
  cmd->add_option("--nproc", flags.nproc,
                  "Start N trainer processes on this machine, each with cores/N threads and a "
                  "1/N share of the training nodes; gradients are averaged over them. Under "
                  "torchrun, srun or mpirun leave it at 1: rank and world come from RANK/"
                  "WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS or OMPI_COMM_WORLD_RANK/_SIZE, and the "
                  "rendezvous from MASTER_ADDR/MASTER_PORT")
      ->check(in_range(1, 1024));
  cmd->add_option("--master-port", flags.master_port,
                  "Rendezvous port of --nproc on 127.0.0.1 (0: a free one)")
      ->check(in_range(0, 65535));
  cmd->add_option("--max-restarts", flags.max_restarts,
                  "With --nproc: failures the job survives. When a trainer dies, all trainers "
                  "start again and resume from --checkpoint (keep one with --checkpoint-every)")
      ->check(non_negative());
  cmd->add_option("--dist-timeout", flags.timeout_seconds,
                  "Seconds to wait for the other ranks at the rendezvous and at every collective "
                  "before failing (a rank that exits is noticed at once)")
      ->check(positive());
  cmd->add_option("--bucket-cap-mb", o.sync.bucket_cap_mb,
                  "Gradient bytes per allreduce bucket; smaller buckets start communicating "
                  "earlier in backward")
      ->check(positive());
  cmd->add_flag(
      "--no-overlap", [&o](int64_t) { o.sync.overlap = false; },
      "Allreduce all gradients after backward instead of during it (to measure the overlap)");
  cmd->add_option("--check-sync", o.check_sync_every,
                  "Every K steps verify that all ranks hold identical parameters (0 = never)")
      ->check(non_negative());
  cmd->add_flag("--drop-uneven-inputs", o.drop_uneven_inputs,
                "Every rank runs as many batches as the rank with the fewest (otherwise ranks "
                "that run out shadow the others' steps until all are done)");
}

}  // namespace graphloom::cli
