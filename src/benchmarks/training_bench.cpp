// `graphloom bench train`: end-to-end mini-batch training throughput with its stage split;
// `graphloom bench data-parallel`: the same with 1 and N processes; `graphloom bench aggregate`:
// the native aggregation kernel against the same computation written with libtorch ops, forward
// and backward.
#include "graphloom/benchmarks/training_bench.h"

#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "graphloom/base/atomic_output.h"
#include "graphloom/base/error.h"
#include "graphloom/base/large_block_cache.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/distributed/runtime/process_environment.h"
#include "graphloom/distributed/runtime/process_launcher.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/generators.h"
#include "graphloom/nn/linear.h"
#include "graphloom/nn/models.h"
#include "graphloom/nn/sparse_ops.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/train/node_classification.h"

namespace graphloom::benchmarks {
namespace {

io::Dataset bench_dataset(const std::string& dir) {
  configure_allocator();  // as `graphloom train`
  return dir.empty() ? io::generate_planted({})
                     : io::load_dataset(
                           dir, {.tables_in_memory =
                                     distributed::process_environment().local_world_size <= 1});
}

}  // namespace

void run_train_bench(const TrainBenchOptions& command, distributed::ProcessGroup* group) {
  const io::Dataset dataset = bench_dataset(command.data);
  train::TrainOptions options = command.options;
  options.epochs = 1;
  options.eval_every = 0;
  options.final_test = false;
  options.progress = false;
  const train::TrainResult r = train::train_node_classification(dataset, options, group);
  // The cost of the communication alone: allreduces of all gradients after a barrier, so that
  // no rank waits for a slower one (that skew is part of the in-training figure).
  double allreduce_seconds = 0;
  if (group != nullptr) {
    at::Tensor gradients = at::zeros({r.parameters}, at::kFloat);
    constexpr int kRepeats = 20;
    group->barrier();
    Timer timer;
    for (int i = 0; i < kRepeats; ++i) group->allreduce(gradients);
    allreduce_seconds = timer.seconds() / kRepeats;
  }
  if (group != nullptr && group->rank() != 0) return;
  const auto& t = r.times;
  const int ranks = group != nullptr ? group->world_size() : 1;
  const double loader_work = t.sample + t.fetch;
  fmt::print(
      "train: {} {}-layer hidden {}, fanouts {}, batch {}, {} process(es) x {} threads, {:.1f} "
      "s\n",
      name_of(options.model.kind), options.fanouts.size(), options.model.hidden,
      fmt::join(options.fanouts, ","), options.batch_size, ranks, num_threads(), r.train_seconds);
  fmt::print("  dense products on {}\n", nn::dense_product_blas());
  // Only what this run measured: other systems' figures (DGL's) belong in docs/benchmarks.md
  // with their date and host, and a fixed figure printed as a ratio would claim a comparison
  // on any graph and machine.
  fmt::print("  seeds/s {:.0f}", r.seeds_per_second);
  fmt::print(
      "\n  time split (s): sample {:.2f}  fetch {:.2f} (in loader workers)  wait {:.2f}  "
      "forward {:.2f}  backward {:.2f}  optimizer {:.2f}\n",
      t.sample, t.fetch, t.wait, t.forward, t.backward, t.optimizer);
  fmt::print("  sampling+fetch hidden behind compute: {:.0f}%\n",
             loader_work > 0 ? 100.0 * std::max(0.0, 1.0 - t.wait / loader_work) : 0.0);
  if (ranks > 1) {
    const double step_seconds = r.train_seconds / std::max<int64_t>(r.steps, 1);
    fmt::print(
        "  allreduce of the {:.2f} MB of gradients alone: {:.2f} ms = {:.1f}% of a {:.0f} ms "
        "step\n",
        r.parameters * 4 / 1e6, allreduce_seconds * 1e3, 100.0 * allreduce_seconds / step_seconds,
        step_seconds * 1e3);
    fmt::print(
        "  time in gradient sync ({}; includes waiting for the slower rank): {:.2f} s = {:.1f}% "
        "of the step time\n",
        options.sync.overlap ? "overlapped with backward" : "after backward", t.allreduce,
        100.0 * t.allreduce / r.train_seconds);
  }
  fmt::print("  peak RSS {:.2f} GB (rank 0)\n", peak_rss_bytes() / 1e9);
  fmt::print("  large blocks (rank 0): {}\n", describe(large_block_cache_stats()));
  if (!command.result_json.empty()) {
    const nlohmann::json figures = {{"seeds_per_s", r.seeds_per_second},
                                    {"train_seconds", r.train_seconds},
                                    {"ranks", ranks},
                                    {"backward", t.backward},
                                    {"forward", t.forward},
                                    {"allreduce", t.allreduce},
                                    {"allreduce_alone", allreduce_seconds},
                                    {"steps", r.steps}};
    const std::string text = figures.dump() + "\n";
    AtomicFile out(command.result_json);
    out.write(text.data(), text.size());
    out.commit();
  }
}

// `bench data-parallel`: the same `bench train` job with 1 process, with N processes, and with
// N processes without overlap, each as a child of this one; prints the comparison.
void run_data_parallel_bench(const std::vector<std::string>& argv, int nproc) {
  const std::filesystem::path dir = temporary_sibling(
      std::filesystem::temp_directory_path() / fmt::format("graphloom-bench-{}", ::getpid()));
  std::filesystem::create_directories(dir);
  auto run = [&](int processes, bool overlap, const std::string& name) {
    // This command line as `bench train` with its own --nproc.
    std::vector<std::string> child = distributed::argv_without(argv, {"--nproc"});
    std::replace(child.begin(), child.end(), std::string("data-parallel"), std::string("train"));
    const std::string json = (dir / (name + ".json")).string();
    child.insert(child.end(), {"--nproc", std::to_string(processes), "--result-json", json});
    if (!overlap) child.push_back("--no-overlap");
    fmt::print("== {}\n", name);
    std::fflush(stdout);
    const int code = distributed::run_processes({{.name = name, .argv = child}});
    GL_CHECK(code == 0, "bench run '{}' failed with exit code {}", name, code);
    std::ifstream in(json);
    return nlohmann::json::parse(in);
  };
  nlohmann::json one, overlapped, serial;
  try {
    one = run(1, true, "1 process");
    overlapped = run(nproc, true, fmt::format("{} processes", nproc));
    serial = run(nproc, false, fmt::format("{} processes, no overlap", nproc));
  } catch (...) {
    std::filesystem::remove_all(dir);
    throw;
  }
  std::filesystem::remove_all(dir);
  const double base = one["seeds_per_s"].get<double>();
  const double fast = overlapped["seeds_per_s"].get<double>();
  const double exposed = overlapped["allreduce"].get<double>();
  const double full = serial["allreduce"].get<double>();
  fmt::print("\ndata-parallel summary\n");
  fmt::print("  1 process              {:8.0f} seeds/s\n", base);
  fmt::print("  {} processes            {:8.0f} seeds/s   ratio {:.2f}x\n", nproc, fast,
             fast / base);
  fmt::print("  {} processes no overlap {:8.0f} seeds/s   ratio {:.2f}x\n", nproc,
             serial["seeds_per_s"].get<double>(), serial["seeds_per_s"].get<double>() / base);
  const double alone =
      overlapped["allreduce_alone"].get<double>() * overlapped["steps"].get<double>();
  fmt::print(
      "  allreduce alone (no waiting for a slower rank): {:.2f} s = {:.1f}% of the step "
      "time\n",
      alone, 100.0 * alone / overlapped["train_seconds"].get<double>());
  fmt::print(
      "  time in gradient sync after backward: {:.2f} s; overlapped: {:.2f} s ({:.0f}% of "
      "it hidden behind backward)\n",
      full, exposed, full > 0 ? 100.0 * std::max(0.0, 1.0 - exposed / full) : 0.0);
}

void run_aggregate_bench(const AggregateBenchOptions& options) {
  const int64_t hidden = options.hidden;
  const int repeats = options.repeats;
  const io::Dataset dataset = bench_dataset(options.data);
  const sampling::LocalNeighborSource source(dataset.graph);
  const sampling::NeighborSampler sampler(&source, {.fanouts = {10, 10, 10}});
  const at::Tensor seeds = at::randperm(dataset.num_nodes(), at::kLong).slice(0, 0, 1024);
  const sampling::Block block = sampler.sample(seeds, 0, 0).blocks[0];  // the largest layer
  const nn::BlockView view = nn::BlockView::of(block);
  const torch::Tensor x = torch::randn({block.num_src(), hidden}).set_requires_grad(true);
  const torch::Tensor probe = torch::randn({block.num_dst, hidden});
  const torch::Tensor dst =
      torch::repeat_interleave(torch::arange(block.num_dst), nn::in_degrees(view));
  const torch::Tensor degree = nn::in_degrees(view).clamp_min(1).to(torch::kFloat).unsqueeze(1);

  auto reference = [&] {
    return torch::zeros({block.num_dst, hidden})
               .index_add(0, dst, x.index_select(0, block.indices)) /
           degree;
  };
  auto native = [&] { return nn::aggregate(view, x, nn::Reduce::kMean); };
  GL_CHECK(torch::allclose(native(), reference(), 1e-4, 1e-5),
           "aggregate disagrees with reference");
  auto time = [&](auto fn, bool backward) {
    std::vector<double> runs;
    for (int r = 0; r < repeats; ++r) {
      x.mutable_grad() = torch::Tensor();
      Timer timer;
      const torch::Tensor out = fn();
      if (backward) (out * probe).sum().backward();
      runs.push_back(timer.seconds());
    }
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
  };
  const double native_fwd = time(native, false);
  const double reference_fwd = time(reference, false);
  const double native_both = time(native, true);
  const double reference_both = time(reference, true);
  fmt::print(
      "aggregate (mean) over a sampled block: {} -> {} nodes, {} edges, width {}, {} threads\n",
      block.num_src(), block.num_dst, block.num_edges(), hidden, num_threads());
  fmt::print(
      "  forward            native {:.2f} ms   index_select+index_add_ {:.2f} ms   speedup "
      "{:.1f}x\n",
      native_fwd * 1e3, reference_fwd * 1e3, reference_fwd / native_fwd);
  fmt::print(
      "  forward+backward   native {:.2f} ms   index_select+index_add_ {:.2f} ms   speedup "
      "{:.1f}x\n",
      native_both * 1e3, reference_both * 1e3, reference_both / native_both);
}

}  // namespace graphloom::benchmarks
