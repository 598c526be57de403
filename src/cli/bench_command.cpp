// `graphloom bench ...`: the flags of every benchmark, whose callbacks run the harnesses of the
// benchmarks module (include/graphloom/benchmarks/).
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/benchmarks/distributed_bench.h"
#include "graphloom/benchmarks/loading_bench.h"
#include "graphloom/benchmarks/sampling_bench.h"
#include "graphloom/benchmarks/training_bench.h"

namespace graphloom::cli {
namespace {

void add_repeats_flag(CLI::App* cmd, int& repeats) {
  cmd->add_option("--repeats", repeats, "Runs; the median is reported")->check(positive());
}

void add_sampling_flags(CLI::App* cmd, benchmarks::SamplingBenchOptions& o) {
  add_data_flag(cmd, o.data);
  cmd->add_option("--fanouts", o.fanouts, "Neighbors per layer, input layer first; -1 = all")
      ->delimiter(',');
  cmd->add_option("--batch-size", o.batch_size, "Seeds per mini-batch")->check(positive());
  cmd->add_option("--batches", o.batches, "Mini-batches to measure")->check(positive());
  cmd->add_flag("--replace", o.replace, "Sample with replacement");
  cmd->add_option("--seed", o.seed, "Random seed");
  add_enum_option(cmd, "--sampler", o.sampler,
                  "neighbor, or labor: LABOR-0, measured against the neighbor sampler in the "
                  "same run (distinct input nodes per batch, seeds/s, overlap of consecutive "
                  "batches)");
  cmd->add_flag("--layer-dependency", o.labor.layer_dependency,
                "--sampler labor: the same random numbers in every layer");
  cmd->add_option("--batch-dependency", o.labor.batch_dependency,
                  "--sampler labor: random numbers that drift over this many batches")
      ->check(positive());
  cmd->add_option("--importance-sampling", o.labor.importance_sampling,
                  "--sampler labor: LABOR-* rounds (0: LABOR-0; -1: until converged)");
}

void add_device_flag(CLI::App* cmd, std::string& device, const char* what) {
  cmd->add_option("--device", device, what);
}

void add_sampling_benchmarks(CLI::App* bench) {
  {
    auto o = std::make_shared<benchmarks::SamplingBenchOptions>();
    CLI::App* cmd = bench->add_subcommand(
        "sample", "Multi-layer neighbor sampling throughput: seeds/s and sampled edges/s");
    add_sampling_flags(cmd, *o);
    cmd->add_flag("--weighted", o->weighted,
                  "Also time weighted sampling against uniform, with and without replacement "
                  "(the graph's edge weights, or uniform random weights in (0, 1] if it has none)");
    cmd->add_flag("--temporal", o->temporal,
                  "Also time temporal sampling (strategies uniform and last) against uniform "
                  "sampling without times (the dataset's node/edge timestamps, or random edge "
                  "and seed times if it has none)");
    add_device_flag(cmd, o->device,
                    "Also sample with the tensor-op sampler on this device (cpu, cuda, cuda:N): "
                    "seeds/s against the C++ kernel, blocks checked against its batches");
    cmd->callback([o] { benchmarks::run_sample_bench(*o); });
  }
  {
    auto o = std::make_shared<benchmarks::GatherBenchOptions>();
    CLI::App* cmd = bench->add_subcommand(
        "gather",
        "Random-row feature gather GB/s against a sequential copy of the same bytes, then the same "
        "rows from float16, bfloat16 and int8 copies decoded to float32");
    add_data_flag(cmd, o->data);
    cmd->add_option("--rows", o->rows, "Random rows gathered per run");
    add_repeats_flag(cmd, o->repeats);
    cmd->add_flag("--memory-map", o->memory_map,
                  "Gather from the feature file's memory map (4 KB pages) instead of the table "
                  "read into memory on huge pages, as training does");
    add_device_flag(cmd, o->device,
                    "Also gather the rows onto this CUDA device (cuda, cuda:N) with each feature "
                    "placement: cpu (staged), pinned (zero-copy), device (resident)");
    cmd->add_flag("--disk", o->disk,
                  "Also read the rows from the dataset's feat.npy on each gather (the disk "
                  "feature source, O_DIRECT), through io_uring and through pread");
    cmd->callback([o] { benchmarks::run_gather_bench(*o); });
  }
  {
    auto o = std::make_shared<benchmarks::CacheBenchOptions>();
    CLI::App* cmd = bench->add_subcommand(
        "cache",
        "Feature-cache eviction policies (degree, sieve, s3-fifo, lru, clock) on the rows that "
        "sampled epochs read: hit rate, rows fetched and time per batch, against LRU");
    add_sampling_flags(cmd, o->sampling);
    cmd->add_option("--cache-fraction", o->cache_fraction,
                    "The cache's bytes as a fraction of the feature table's")
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--epochs", o->epochs,
                    "Epochs replayed; the first warms the caches up, the last is reported")
        ->check(positive());
    cmd->callback([o] { benchmarks::run_cache_bench(*o); });
  }
  {
    auto o = std::make_shared<benchmarks::LoaderBenchOptions>();
    CLI::App* cmd = bench->add_subcommand(
        "loader",
        "Whole-pipeline throughput (sample + gather features and labels), no-op consumer");
    add_sampling_flags(cmd, o->sampling);
    cmd->add_option("--workers", o->workers,
                    "Loader workers, each preparing one batch (0 = one per thread); the threads "
                    "are shared out among them");
    cmd->add_option("--prefetch", o->prefetch,
                    "Most batches prepared ahead of the consumer (at least --workers)");
    cmd->callback([o] { benchmarks::run_loader_bench(*o); });
  }
}

// `bench train` and `bench data-parallel`: the benchmark's options and the data-parallel flags.
struct TrainBenchFlags {
  benchmarks::TrainBenchOptions bench;
  distributed::DataParallelOptions parallel;
};

void add_train_benchmarks(CLI::App* bench, const std::vector<std::string>& argv) {
  for (const bool comparison : {false, true}) {
    auto command = std::make_shared<TrainBenchFlags>();
    command->parallel.argv = argv;
    CLI::App* cmd =
        comparison
            ? bench->add_subcommand("data-parallel",
                                    "`bench train` with 1 process, with --nproc processes and "
                                    "with --nproc without overlap: seeds/s, allreduce share, "
                                    "how much of it backward hides")
            : bench->add_subcommand(
                  "train", "End-to-end training seeds/s with the per-stage time split (one epoch)");
    add_data_flag(cmd, command->bench.data);
    add_train_flags(cmd, command->bench.options);
    cmd->add_option("--batches", command->bench.options.max_batches,
                    "Training batches to measure per process (0 = epoch)");
    if (comparison) {
      command->parallel.nproc = 2;
      cmd->add_option("--nproc", command->parallel.nproc, "Processes of the data-parallel runs")
          ->check(in_range(2, 64));
      cmd->add_option("--bucket-cap-mb", command->bench.options.sync.bucket_cap_mb,
                      "Gradient bytes per allreduce bucket")
          ->check(positive());
      cmd->callback([command] {
        benchmarks::run_data_parallel_bench(command->parallel.argv, command->parallel.nproc);
      });
      continue;
    }
    add_data_parallel_flags(cmd, command->parallel, command->bench.options);
    cmd->add_option("--result-json", command->bench.result_json, "Also write the figures as JSON");
    cmd->callback([command] {
      exit_if_failed(
          distributed::run_data_parallel(command->parallel, [&](distributed::ProcessGroup* group) {
            benchmarks::run_train_bench(command->bench, group);
          }));
    });
  }
  {
    auto o = std::make_shared<benchmarks::AggregateBenchOptions>();
    CLI::App* cmd = bench->add_subcommand(
        "aggregate", "Native aggregation kernel vs. libtorch index_select/index_add_");
    add_data_flag(cmd, o->data);
    cmd->add_option("--hidden", o->hidden, "Feature width");
    add_repeats_flag(cmd, o->repeats);
    cmd->callback([o] { benchmarks::run_aggregate_bench(*o); });
  }
}

void add_dist_benchmarks(CLI::App* bench) {
  auto o = std::make_shared<benchmarks::DistBenchOptions>();
  CLI::App* cmd = bench->add_subcommand(
      "dist",
      "DistGraph over loopback gRPC servers vs the local graph (sampling, loader) and RPC pull "
      "throughput with 1, 4 and 16 clients");
  add_data_flag(cmd, o->data);
  cmd->add_option("--parts", o->parts, "Parts, each served by its own server")
      ->check(in_range(2, 16));
  cmd->add_option("--fanouts", o->fanouts, "Neighbors per layer")->delimiter(',');
  cmd->add_option("--batch-size", o->batch_size, "Seeds per batch");
  cmd->add_option("--batches", o->batches, "Batches per measurement");
  cmd->add_option("--workers", o->loader.num_workers,
                  "Loader workers, on both sides (each prepares a batch at a time)")
      ->check(positive());
  cmd->add_option("--prefetch", o->loader.prefetch,
                  "Batches the loaders prepare ahead, on both sides (at least --workers)")
      ->check(positive());
  cmd->add_option("--pull-rows", o->pull_rows, "Rows per pull call");
  cmd->add_option("--pull-calls", o->pull_calls, "Pull calls per client");
  cmd->add_flag("--edge-ids", o->edge_ids,
                "Keep each block's edge ids (training drops them, and DistGraph then asks the "
                "servers to leave them out)");
  cmd->callback([o] { benchmarks::run_dist_bench(*o); });
}

// `bench load` and `bench csc`: a dataset directory, timed.
void add_timing_benchmark(CLI::App* bench, const char* name, const char* help, const char* dir_help,
                          void (*run)(const benchmarks::LoadingBenchOptions&)) {
  auto options = std::make_shared<benchmarks::LoadingBenchOptions>();
  CLI::App* cmd = bench->add_subcommand(name, help);
  cmd->add_option("dir", options->dir, dir_help)->required();
  add_repeats_flag(cmd, options->repeats);
  cmd->callback([options, run] { run(*options); });
}

}  // namespace

void add_bench_command(CLI::App& app, const std::vector<std::string>& argv) {
  CLI::App* cmd = app.add_subcommand("bench", "Benchmarks that print figures and their references");
  cmd->require_subcommand(1);
  add_sampling_benchmarks(cmd);
  add_train_benchmarks(cmd, argv);
  add_dist_benchmarks(cmd);
  add_timing_benchmark(
      cmd, "load", "Time loading a dataset into a ready-to-sample CSC with memory-mapped features",
      "Dataset directory", benchmarks::run_load_bench);
  add_timing_benchmark(
      cmd, "csc", "Time the COO->CSC build against one std::sort of the same edge array",
      "Dataset directory whose graph is an 'edges' array", benchmarks::run_csc_bench);
}

}  // namespace graphloom::cli
