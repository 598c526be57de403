// The graphloom subcommands. Each add_*_command registers its flags on the app and a callback
// that calls the library; errors propagate to main(), the one place that turns them into an
// exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace graphloom::cli {

void add_inspect_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
// Registered under `bench` by add_bench_command.
void add_sampling_benchmarks(CLI::App* bench);

}  // namespace graphloom::cli
