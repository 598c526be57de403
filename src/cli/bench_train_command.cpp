// `graphloom bench train`: end-to-end mini-batch training throughput with its stage split;
// `graphloom bench aggregate`: the native aggregation kernel against the same computation
// written with libtorch ops, forward and backward.
#include <torch/torch.h>

#include <memory>

#include "commands.h"
#include "graphloom/base/error.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/generators.h"
#include "graphloom/nn/sparse_ops.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"

namespace graphloom::cli {
namespace {

// DGL 1.1.3 on this machine kind, 3-layer GraphSAGE-mean, hidden 256, batch 1024, 2 threads
// (figures of the training issue, measured by its author).
double dgl_seeds_per_second(const std::vector<int64_t>& fanouts) {
  if (fanouts == std::vector<int64_t>{10, 10, 10}) return 1240;
  if (fanouts == std::vector<int64_t>{15, 10, 5}) return 2030;
  return 0;
}

io::Dataset bench_dataset(const std::string& dir) {
  configure_allocator();  // as `graphloom train`
  return dir.empty() ? io::generate_planted({}) : io::load_dataset(dir);
}

void run_bench_train(const std::string& dir, train::TrainOptions options) {
  const io::Dataset dataset = bench_dataset(dir);
  options.epochs = 1;
  options.eval_every = 0;
  options.final_test = false;
  options.progress = false;
  const train::TrainResult r = train::train_node_classification(dataset, options);
  const auto& t = r.times;
  const double loader_work = t.sample + t.fetch;
  fmt::print("train: {} {}-layer hidden {}, fanouts {}, batch {}, {} threads, {:.1f} s\n",
             options.model.kind, options.fanouts.size(), options.model.hidden,
             fmt::join(options.fanouts, ","), options.batch_size, num_threads(), r.train_seconds);
  fmt::print("  seeds/s {:.0f}", r.seeds_per_second);
  if (const double dgl = dgl_seeds_per_second(options.fanouts);
      dgl > 0 && options.model.kind == "sage") {
    fmt::print("   DGL 1.1.3 reference {:.0f}   ratio {:.2f}x", dgl, r.seeds_per_second / dgl);
  }
  fmt::print(
      "\n  time split (s): sample {:.2f}  fetch {:.2f} (in loader workers)  wait {:.2f}  "
      "forward {:.2f}  backward {:.2f}  optimizer {:.2f}\n",
      t.sample, t.fetch, t.wait, t.forward, t.backward, t.optimizer);
  fmt::print("  sampling+fetch hidden behind compute: {:.0f}%\n",
             loader_work > 0 ? 100.0 * std::max(0.0, 1.0 - t.wait / loader_work) : 0.0);
  fmt::print("  peak RSS {:.2f} GB\n", peak_rss_bytes() / 1e9);
}

void run_bench_aggregate(const std::string& dir, int64_t hidden, int repeats) {
  const io::Dataset dataset = bench_dataset(dir);
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

}  // namespace

void add_train_benchmarks(CLI::App* bench) {
  {
    auto dir = std::make_shared<std::string>();
    auto options = std::make_shared<train::TrainOptions>();
    options->model.hidden = 256;
    options->max_batches = 60;
    CLI::App* cmd = bench->add_subcommand(
        "train", "End-to-end training seeds/s with the per-stage time split (one epoch)");
    cmd->add_option("--data", *dir, "Dataset directory (default: embedded default dataset)");
    add_train_flags(cmd, *options);
    cmd->add_option("--batches", options->max_batches, "Training batches to measure (0 = epoch)")
        ->capture_default_str();
    cmd->callback([dir, options] { run_bench_train(*dir, *options); });
  }
  {
    auto dir = std::make_shared<std::string>();
    auto hidden = std::make_shared<int64_t>(256);
    auto repeats = std::make_shared<int>(5);
    CLI::App* cmd = bench->add_subcommand(
        "aggregate", "Native aggregation kernel vs. libtorch index_select/index_add_");
    cmd->add_option("--data", *dir, "Dataset directory (default: embedded default dataset)");
    cmd->add_option("--hidden", *hidden, "Feature width")->capture_default_str();
    cmd->add_option("--repeats", *repeats, "Runs; the median is reported")->capture_default_str();
    cmd->callback([dir, hidden, repeats] { run_bench_aggregate(*dir, *hidden, *repeats); });
  }
}

}  // namespace graphloom::cli
