// The graphloom subcommands. Each add_*_command registers its flags on the app and a callback
// that calls the library; errors propagate to main(), the one place that turns them into an
// exit code.
#pragma once

#include <CLI/CLI.hpp>

#include "graphloom/partition/partition_format.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::cli {

// Thrown to leave with a given exit code after the failure was already reported (the first
// failed trainer's code under --nproc).
struct ExitCode {
  int code;
};

void add_inspect_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
// `argv`: the program's command line (`--nproc` restarts it once per trainer). Also `plot`.
void add_train_command(CLI::App& app, const std::vector<std::string>& argv);
// `command_line` is recorded in partition.json.
void add_partition_command(CLI::App& app, const std::string& command_line);
// Registered under `bench` by add_bench_command.
void add_sampling_benchmarks(CLI::App* bench);
void add_train_benchmarks(CLI::App* bench);
// The per-part table of `partition` and of `inspect` on a partition directory.
void print_partition_table(const partition::PartitionInfo& info);
// The model and optimisation flags shared by `train` and `bench train`.
void add_train_flags(CLI::App* cmd, train::TrainOptions& options);

}  // namespace graphloom::cli
