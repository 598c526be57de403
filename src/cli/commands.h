// The graphloom subcommands. Each add_*_command registers its flags on the app and a callback
// that calls the library; errors propagate to main(), the one place that turns them into an
// exit code.
#pragma once

#include <CLI/CLI.hpp>

#include "graphloom/train/node_classification.h"

namespace graphloom::cli {

void add_inspect_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_train_command(CLI::App& app);  // also `plot`
// Registered under `bench` by add_bench_command.
void add_sampling_benchmarks(CLI::App* bench);
void add_train_benchmarks(CLI::App* bench);
// The model and optimisation flags shared by `train` and `bench train`.
void add_train_flags(CLI::App* cmd, train::TrainOptions& options);

}  // namespace graphloom::cli
