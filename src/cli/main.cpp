// Entry point of the `graphloom` program: global flags, subcommands, and the error boundary
// (one line on stderr; exit 1 for failures, 2 for usage errors; never a stack trace).
#include <c10/util/Exception.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/error.h"
#include "graphloom/base/logging.h"
#include "graphloom/base/system.h"

#ifndef GRAPHLOOM_VERSION
#define GRAPHLOOM_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  CLI::App app{"graphloom: train graph neural networks on graphs too big for one machine"};
  app.set_version_flag("--version", "graphloom " GRAPHLOOM_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  // Every option's help shows its default; subcommands inherit this when they are added.
  app.option_defaults()->always_capture_default();
  std::string log_level = "info";
  int threads = 0;
  app.add_option("--log-level", log_level,
                 "Log verbosity on stderr: trace, debug, info, warn, error, critical, off");
  app.add_option("--threads", threads,
                 "Threads for graphloom's kernels and libtorch (0 = all cores)")
      ->check(graphloom::cli::non_negative());
  std::string shm_dir;
  app.add_option("--shm-dir", shm_dir,
                 "Directory for the shared-memory segments of servers and trainers (default: "
                 "GRAPHLOOM_SHM_DIR, else /dev/shm); every process of a machine must use the same "
                 "one, and `launch` passes it on. A tmpfs mounted with huge=within_size holds "
                 "parts on 2 MB pages, which sampling and feature reads run faster on")
      ->check(CLI::ExistingDirectory);
  // Global flags take effect before any subcommand callback runs.
  app.parse_complete_callback([&] {
    graphloom::set_log_level(log_level);
    graphloom::set_num_threads(threads);
    // Through the environment: processes this one starts (launch, --nproc) inherit it.
    if (!shm_dir.empty()) ::setenv("GRAPHLOOM_SHM_DIR", shm_dir.c_str(), /*overwrite=*/1);
  });

  const std::vector<std::string> arguments(argv, argv + argc);
  graphloom::cli::add_train_command(app, arguments);
  graphloom::cli::add_plot_command(app);
  graphloom::cli::add_partition_command(app, fmt::format("{}", fmt::join(arguments, " ")));
  graphloom::cli::add_inspect_command(app);
  graphloom::cli::add_convert_command(app);
  graphloom::cli::add_generate_command(app);
  graphloom::cli::add_bench_command(app, arguments);
  graphloom::cli::add_serve_command(app, arguments);
  graphloom::cli::add_launch_command(app);
  graphloom::cli::add_demo_command(app);

  try {
    app.parse(argc, argv);
  } catch (const graphloom::cli::ExitCode& e) {
    return e.code;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "graphloom: " << e.what() << "\n(run with --help for usage)\n";
    return 2;
  } catch (const graphloom::OptionError& e) {
    std::cerr << "graphloom: " << graphloom::cli::in_flag_terms(e) << "\n";
    return 2;
  } catch (const graphloom::UsageError& e) {
    std::cerr << "graphloom: " << e.what() << "\n";
    return 2;
  } catch (const c10::Error& e) {
    // A libtorch check that slipped past our own validation: its message, not its backtrace.
    std::cerr << "graphloom: error: " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "graphloom: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
