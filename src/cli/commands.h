// The graphloom subcommands. Each add_*_command registers its flags on the app and a callback
// that calls the library; errors propagate to main(), the one place that turns them into an
// exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "graphloom/distributed/runtime/local_trainers.h"
#include "graphloom/train/train_options.h"

namespace graphloom::cli {

// Thrown to leave with a given exit code after the failure was already reported (the first
// failed trainer's code under --nproc).
struct ExitCode {
  int code;
};
// Leaves with `code` when it is a failure's (a job of several processes that reported it).
inline void exit_if_failed(int code) {
  if (code != 0) throw ExitCode{code};
}

void add_inspect_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_generate_command(CLI::App& app);
// `argv`: the program's command line (`--nproc` restarts it once per trainer).
void add_train_command(CLI::App& app, const std::vector<std::string>& argv);
void add_plot_command(CLI::App& app);
// `graphloom serve`; `argv` as for add_train_command (--num-servers restarts it per server).
void add_serve_command(CLI::App& app, const std::vector<std::string>& argv);
void add_launch_command(CLI::App& app);
void add_demo_command(CLI::App& app);
// `argv` as for add_train_command (`bench train --nproc`).
void add_bench_command(CLI::App& app, const std::vector<std::string>& argv);
// `command_line` is recorded in partition.json.
void add_partition_command(CLI::App& app, const std::string& command_line);
// `--feature-dtype` of `convert` and `partition`: every node feature re-encoded as float32,
// float16, bfloat16 or int8 (with a row scale); "keep" leaves them as they are.
void add_feature_dtype_flag(CLI::App* cmd, std::string& dtype);
// `--data DIR`, a dataset directory; empty: the embedded default dataset.
void add_data_flag(CLI::App* cmd, std::string& data);
// The model and optimisation flags shared by `train` and `bench train`.
void add_train_flags(CLI::App* cmd, train::TrainOptions& options);

// Data-parallel flags of `train` and `bench train` (the job itself runs through
// distributed::run_data_parallel; a failure's exit code leaves as ExitCode).
void add_data_parallel_flags(CLI::App* cmd, distributed::DataParallelOptions& parallel,
                             train::TrainOptions& options);

}  // namespace graphloom::cli
