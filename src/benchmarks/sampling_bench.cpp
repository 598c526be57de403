// `graphloom bench sample|gather|loader`: throughput of neighbor sampling, feature gather and
// the whole loading pipeline, with their references measured in the same run.
#include "graphloom/benchmarks/sampling_bench.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "cache_bench.h"
#include "graphloom/base/device.h"
#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/features/dataset_rows.h"
#include "graphloom/features/device_rows.h"
#include "graphloom/features/disk_feature_source.h"
#include "graphloom/features/row_codec.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/generators.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/sampling/item_sampler.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/sampling/tensor_neighbor_source.h"
#include "labor_bench.h"
#include "sampling_measure.h"
#include "temporal_bench.h"
#include "weighted_bench.h"

namespace graphloom::benchmarks {
namespace {

// Every sampling benchmark allocates and frees mini-batch buffers at a high rate.
io::Dataset load_or_generate(const std::string& dir, bool tables_in_memory = true) {
  configure_allocator();
  Timer timer;
  io::Dataset dataset = dir.empty() ? io::generate_planted({})
                                    : io::load_dataset(dir, {.tables_in_memory = tables_in_memory});
  fmt::print("dataset {}: {} nodes, {} edges (ready in {:.2f} s)\n",
             dir.empty() ? "embedded default" : dir, dataset.num_nodes(), dataset.graph.num_edges(),
             timer.seconds());
  return dataset;
}

at::Tensor train_items(const io::Dataset& dataset) {
  const auto it = dataset.splits.find("train");
  return it != dataset.splits.end() ? it->second : at::arange(dataset.num_nodes(), at::kLong);
}

void print_rss() { fmt::print("  peak RSS {:.2f} GB\n", peak_rss_bytes() / 1e9); }

// The same rows gathered from encoded copies of the table and decoded into float32: what
// compressed features cost (or save) in the gather, next to the plain float32 gather above.
void bench_encoded_gather(const at::Tensor& table, const at::Tensor& ids, int repeats,
                          double float32_seconds) {
  const int64_t rows = ids.numel();
  at::Tensor out = at::empty({rows, table.size(1)}, at::kFloat);
  fmt::print("  decoded into float32 ({:.0f} MB written):\n", out.nbytes() / 1e6);
  fmt::print("  {:<9} {:>11} {:>13} {:>12} {:>14}\n", "stored", "bytes/row", "read GB/s", "rows/s",
             "vs float32");
  for (const auto dtype : {at::kHalf, at::kBFloat16, at::kChar}) {
    const features::EncodedRows encoded = features::encode_rows(table, dtype);
    features::gather_decoded_rows(encoded, ids, out);  // warm-up
    std::vector<double> seconds;
    for (int r = 0; r < repeats; ++r) {
      Timer timer;
      features::gather_decoded_rows(encoded, ids, out);
      seconds.push_back(timer.seconds());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    const int64_t row_bytes = table.size(1) * static_cast<int64_t>(c10::elementSize(dtype)) +
                              (encoded.row_scale.defined() ? 4 : 0);
    fmt::print("  {:<9} {:>11} {:>13.2f} {:>12.3g} {:>13.2f}x\n", dtype_name(dtype), row_bytes,
               rows * row_bytes / median / 1e9, rows / median, float32_seconds / median);
  }
}

bool same_blocks(const sampling::MiniBatch& a, const sampling::MiniBatch& b) {
  if (a.blocks.size() != b.blocks.size()) return false;
  for (std::size_t l = 0; l < a.blocks.size(); ++l) {
    const sampling::Block& x = a.blocks[l];
    const sampling::Block& y = b.blocks[l];
    if (!at::equal(x.src_ids, y.src_ids.cpu()) || !at::equal(x.indptr, y.indptr.cpu()) ||
        !at::equal(x.indices, y.indices.cpu()) || !at::equal(x.edge_ids, y.edge_ids.cpu()))
      return false;
  }
  return true;
}

// The tensor-op sampler on `device`, one caller (its ops are parallel on the CPU and
// asynchronous on a GPU), with the CSC in device memory and, on a GPU, pinned in host memory
// (zero-copy), against the C++ kernel's `reference` figure; the first batches are compared
// block for block with the C++ sampler's.
void bench_tensor_sampler(const io::Dataset& dataset, const sampling::NeighborSampler& cpp,
                          const std::vector<at::Tensor>& seeds, int64_t total,
                          const SamplingBenchOptions& o, const SamplingFigures& reference) {
  const c10::Device device = parse_device(o.device);
  std::vector<sampling::CscPlacement> placements = {sampling::CscPlacement::kDevice};
  if (!device.is_cpu()) placements.push_back(sampling::CscPlacement::kPinned);
  for (const sampling::CscPlacement placement : placements) {
    const sampling::TensorNeighborSource source(dataset.graph, device, placement);
    const sampling::NeighborSampler sampler(
        &source, {.fanouts = o.fanouts, .replace = o.replace, .seed = o.seed});
    const int64_t checked = std::min<int64_t>(total, 8);
    int64_t equal = 0;
    for (int64_t i = 0; i < checked; ++i) {
      equal += same_blocks(cpp.sample(seeds[i], 0, i), sampler.sample(seeds[i], 0, i));
    }
    sampler.sample(seeds[0].to(device), 0, 0);  // warm-up
    int64_t edges = 0, done = 0;
    Timer timer;
    for (int64_t i = 0; i < total; ++i) {
      const sampling::MiniBatch batch = sampler.sample(seeds[i].to(device), 0, i);
      edges += batch.num_sampled_edges();  // reads sizes only: the last batch syncs below
      done += batch.seeds.numel();
      if (i + 1 == total) batch.blocks.front().src_ids.sum().item<int64_t>();
    }
    const double seconds = timer.seconds();
    fmt::print(
        "  tensor-op sampler on {}, graph {}: {:.0f} seeds/s, {:.3g} sampled edges/s; {:.2f}x "
        "the C++ kernel; blocks equal to the C++ sampler's in {} of {} batches\n",
        device.str(),
        placement == sampling::CscPlacement::kPinned ? "pinned in host memory" : "in its memory",
        done / seconds, edges / seconds, (done / seconds) / (reference.seeds / reference.seconds),
        equal, checked);
  }
}

// Each feature placement's gather of `ids` onto `device` (GB/s), the rows checked against the
// CPU gather once.
void bench_device_gather(const at::Tensor& table, const at::Tensor& ids, int repeats,
                         const std::string& device_name, double cpu_seconds) {
  const c10::Device device = parse_device(device_name);
  const at::Tensor want = table.index_select(0, ids);
  const double bytes = static_cast<double>(want.nbytes());
  fmt::print("  onto {} ({} rows, median of {}):\n", device.str(), ids.numel(), repeats);
  for (const auto placement :
       {features::FeaturePlacement::kCpu, features::FeaturePlacement::kPinned,
        features::FeaturePlacement::kDevice}) {
    const features::DeviceRows rows(table, device, placement);
    const at::Tensor device_ids = ids.to(device);
    const bool equal = at::equal(rows.gather(device_ids).cpu(), want);  // also the warm-up
    std::vector<double> seconds;
    for (int r = 0; r < repeats; ++r) {
      Timer timer;
      rows.gather(device_ids).sum().item<double>();  // waits for the device
      seconds.push_back(timer.seconds());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    fmt::print("  {:<8} {:>8.2f} GB/s  {:.2f}x the CPU gather  rows equal: {}\n",
               name_of(placement), bytes / median / 1e9, cpu_seconds / median,
               equal ? "yes" : "NO");
  }
}

// The same rows read from feat.npy on each gather by the disk source (O_DIRECT: from the disk,
// not the page cache), through io_uring and through pread, against the in-memory gather.
void bench_disk_gather(const std::string& data, const at::Tensor& ids, int repeats,
                       double memory_bytes_per_second) {
  GL_CHECK(!data.empty(), "bench gather --disk needs --data (a dataset directory with feat.npy)");
  const std::filesystem::path file = std::filesystem::path(data) / "feat.npy";
  fmt::print("  from {} on each gather (O_DIRECT), median of {}:\n", file.string(), repeats);
  fmt::print("  {:<9} {:>12} {:>14} {:>13}\n", "reader", "rows GB/s", "disk read GB/s",
             "vs memory");
  for (const bool io_uring : {true, false}) {
    const features::DiskFeatureSource disk({{"feat", file}}, {.io_uring = io_uring});
    std::vector<double> seconds;
    int64_t read = 0;
    for (int r = 0; r < repeats; ++r) {
      const int64_t before = disk.bytes_read();
      Timer timer;
      const at::Tensor rows = disk.gather("feat", ids);
      seconds.push_back(timer.seconds());
      read = disk.bytes_read() - before;
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    const double useful = static_cast<double>(ids.numel()) *
                          static_cast<double>(disk.info("feat").row_shape.at(0)) *
                          static_cast<double>(c10::elementSize(disk.info("feat").dtype));
    fmt::print("  {:<9} {:>12.3f} {:>14.3f} {:>12.3f}x\n", disk.reader(), useful / median / 1e9,
               static_cast<double>(read) / median / 1e9, useful / median / memory_bytes_per_second);
  }
}

}  // namespace

void run_sample_bench(const SamplingBenchOptions& o) {
  if (!o.device.empty()) parse_device(o.device);  // refuse before the long part
  if (o.sampler == sampling::SamplingMethod::kLabor && o.replace) {
    throw OptionError("replace", "LABOR samples without replacement: drop --replace");
  }
  const io::Dataset dataset = load_or_generate(o.data);
  const sampling::LocalNeighborSource source(dataset.graph);
  const sampling::NeighborSampler sampler(
      &source, {.fanouts = o.fanouts, .replace = o.replace, .seed = o.seed});
  const sampling::ItemSampler items(train_items(dataset),
                                    {.batch_size = o.batch_size, .shuffle = true, .seed = o.seed});
  const int threads = num_threads();
  const auto seeds = items.batches(0);
  const int64_t total = std::min<int64_t>(o.batches, static_cast<int64_t>(seeds.size()));
  GL_CHECK(total > 0, "no batches to sample (train split empty?)");
  const SamplingFigures f = measure_sampling(sampler, seeds, total, threads);
  fmt::print("sample: fanouts {}{}, batch {}, {} batches, {} threads, replace={}\n",
             fmt::join(o.fanouts, ","), dataset.schema.empty() ? "" : " per edge type",
             o.batch_size, total, threads, o.replace);
  fmt::print("  seeds/s        {:>12.0f}  ({:.0f} per thread)\n", f.seeds / f.seconds,
             f.seeds / f.seconds / threads);
  fmt::print("  sampled edges/s {:>11.3g}  ({:.3g} per thread)\n", f.edges / f.seconds,
             f.edges / f.seconds / threads);
  fmt::print("  per batch: {:.0f} sampled edges, {:.0f} input nodes, {:.2f} ms\n",
             static_cast<double>(f.edges) / total, static_cast<double>(f.inputs) / total,
             f.seconds * 1e3 / total * threads);
  if (!dataset.schema.empty()) {
    // Reference: the same graph without edge types (fanout over all in-edges together), so
    // the typed kernel's cost per sampled edge shows as a ratio.
    graph::CscGraph untyped = dataset.graph;
    untyped.type_per_edge = at::Tensor();
    untyped.weight_alias = at::Tensor();  // its tables are per edge-type segment
    const sampling::LocalNeighborSource plain(untyped);
    const sampling::NeighborSampler plain_sampler(
        &plain, {.fanouts = o.fanouts, .replace = o.replace, .seed = o.seed});
    const SamplingFigures r = measure_sampling(plain_sampler, seeds, total, threads);
    const double typed_rate = f.edges / f.seconds;
    const double plain_rate = r.edges / r.seconds;
    fmt::print("  same graph untyped: {:.0f} seeds/s, {:.3g} sampled edges/s ({:.0f} per batch)\n",
               r.seeds / r.seconds, plain_rate, static_cast<double>(r.edges) / total);
    fmt::print("  typed / untyped sampled edges/s: {:.2f}\n", typed_rate / plain_rate);
  }
  if (!o.device.empty()) bench_tensor_sampler(dataset, sampler, seeds, total, o, f);
  if (o.sampler == sampling::SamplingMethod::kLabor) {
    bench_labor(dataset, source, seeds, total, o, threads);
  }
  if (o.weighted) bench_weighted(dataset, seeds, total, o, threads);
  if (o.temporal) bench_temporal(dataset, seeds, total, o, threads);
  print_rss();
}

void run_gather_bench(const GatherBenchOptions& o) {
  if (!o.device.empty()) parse_device(o.device);  // refuse before the long part
  const int repeats = o.repeats;
  const io::Dataset dataset = load_or_generate(o.data, /*tables_in_memory=*/!o.memory_map);
  GL_CHECK(dataset.node_features.count("feat"), "bench gather needs a node feature named 'feat'");
  const at::Tensor table = dataset.node_features.at("feat").contiguous();
  const int64_t n = table.size(0);
  const int64_t rows = std::min(o.rows, n);
  at::Tensor ids = at::randperm(n, at::kLong).slice(0, 0, rows).contiguous();
  at::Tensor out = at::empty({rows, table.size(1)}, table.options());
  const int64_t bytes = static_cast<int64_t>(out.nbytes());
  features::gather_rows(table, ids, out);  // warm-up: page in the table

  // Reference: the same bytes copied sequentially from one contiguous block, same threads.
  at::Tensor block = table.slice(0, 0, rows).contiguous();
  at::Tensor block_out = at::empty_like(block);
  const auto copy_block = [&] {
    const int threads = num_threads();
    const int64_t chunk = (bytes + threads - 1) / threads;
#pragma omp parallel for schedule(static, 1)
    for (int t = 0; t < threads; ++t) {
      const int64_t begin = std::min<int64_t>(bytes, t * chunk);
      const int64_t end = std::min<int64_t>(bytes, begin + chunk);
      std::memcpy(static_cast<char*>(block_out.data_ptr()) + begin,
                  static_cast<const char*>(block.data_ptr()) + begin, end - begin);
    }
  };
  copy_block();  // warm-up: fault in the output pages, as the gather's warm-up did for `out`
  std::vector<double> gather_s;
  std::vector<double> copy_s;
  for (int r = 0; r < repeats; ++r) {
    Timer timer;
    features::gather_rows(table, ids, out);
    gather_s.push_back(timer.seconds());
    timer.reset();
    copy_block();
    copy_s.push_back(timer.seconds());
  }
  // Each repeat's ratio pairs a gather with the copy right after it, so a neighbor's burst of
  // memory traffic on this shared host slows both sides of one pair rather than one side of
  // the medians.
  std::vector<double> ratios;
  for (int r = 0; r < repeats; ++r) ratios.push_back(copy_s[r] / gather_s[r]);
  std::sort(ratios.begin(), ratios.end());
  std::sort(gather_s.begin(), gather_s.end());
  std::sort(copy_s.begin(), copy_s.end());
  const double gather = gather_s[gather_s.size() / 2];
  const double copy = copy_s[copy_s.size() / 2];
  fmt::print("gather: {} random rows of {} bytes ({:.0f} MB), {} threads, median of {}\n", rows,
             bytes / rows, bytes / 1e6, num_threads(), repeats);
  fmt::print(
      "  random-row gather {:.2f} GB/s   sequential copy {:.2f} GB/s   ratio {:.2f} (median of "
      "the {} paired runs; range {:.2f}-{:.2f})\n",
      bytes / gather / 1e9, bytes / copy / 1e9, ratios[ratios.size() / 2], repeats, ratios.front(),
      ratios.back());
  if (table.scalar_type() == at::kFloat && table.dim() == 2) {
    bench_encoded_gather(table, ids, repeats, gather);
  }
  if (!o.device.empty()) bench_device_gather(table, ids, repeats, o.device, gather);
  if (o.disk) bench_disk_gather(o.data, ids, repeats, bytes / gather);
  print_rss();
}

void run_loader_bench(const LoaderBenchOptions& options) {
  const SamplingBenchOptions& o = options.sampling;
  const int prefetch = options.prefetch;
  const io::Dataset dataset = load_or_generate(o.data);
  GL_CHECK(dataset.labels.defined(), "bench loader needs labels");
  const sampling::LocalNeighborSource source(dataset.graph);
  const sampling::NeighborSampler sampler(
      &source, {.fanouts = o.fanouts, .replace = o.replace, .seed = o.seed});
  const sampling::ItemSampler items(train_items(dataset),
                                    {.batch_size = o.batch_size, .shuffle = true, .seed = o.seed});
  const features::TensorFeatureSource features = features::dataset_rows(dataset);
  const int threads = num_threads();
  const int workers = options.workers > 0 ? options.workers : threads;
  loader::DataLoader loader(&items, &sampler, &features,
                            {.num_workers = workers,
                             .prefetch = std::max(prefetch, workers),
                             .threads_per_worker = std::max(1, threads / workers)});
  loader.start_epoch(0);
  int64_t batches = 0;
  int64_t seeds = 0;
  int64_t inputs = 0;
  double sample_seconds = 0;
  double fetch_seconds = 0;
  Timer timer;
  while (batches < o.batches) {
    auto batch = loader.next();
    if (!batch) break;
    ++batches;
    seeds += batch->seeds.numel();
    inputs += batch->input_nodes().numel();
    sample_seconds += batch->sample_seconds;
    fetch_seconds += batch->fetch_seconds;
  }
  const double seconds = timer.seconds();
  fmt::print(
      "loader (sample + gather features and labels): fanouts {}, batch {}, {} batches, {} "
      "workers x {} threads, prefetch {}\n",
      fmt::join(o.fanouts, ","), o.batch_size, batches, workers, std::max(1, threads / workers),
      std::max(prefetch, workers));
  fmt::print("  batches/s {:.1f}   seeds/s {:.0f}   input rows/batch {:.0f}\n", batches / seconds,
             seeds / seconds, static_cast<double>(inputs) / std::max<int64_t>(batches, 1));
  fmt::print("  per batch in a worker: sample {:.1f} ms, gather {:.1f} ms\n",
             1e3 * sample_seconds / std::max<int64_t>(batches, 1),
             1e3 * fetch_seconds / std::max<int64_t>(batches, 1));
  print_rss();
}

void run_cache_bench(const CacheBenchOptions& o) {
  GL_CHECK(o.cache_fraction > 0 && o.cache_fraction <= 1,
           "--cache-fraction must be in (0, 1], got {}", o.cache_fraction);
  GL_CHECK(o.epochs >= 1, "--epochs must be at least 1, got {}", o.epochs);
  const SamplingBenchOptions& s = o.sampling;
  const io::Dataset dataset = load_or_generate(s.data);
  const sampling::LocalNeighborSource source(dataset.graph);
  const sampling::NeighborSampler sampler(&source, {.fanouts = s.fanouts,
                                                    .replace = s.replace,
                                                    .seed = s.seed,
                                                    .method = s.sampler,
                                                    .labor = s.labor});
  const sampling::ItemSampler items(train_items(dataset),
                                    {.batch_size = s.batch_size, .shuffle = true, .seed = s.seed});
  std::vector<std::vector<at::Tensor>> epochs;
  for (int64_t e = 0; e < o.epochs; ++e) {
    std::vector<at::Tensor> seeds = items.batches(static_cast<uint64_t>(e));
    seeds.resize(std::min<std::size_t>(seeds.size(), static_cast<std::size_t>(s.batches)));
    GL_CHECK(!seeds.empty(), "no batches to sample (train split empty?)");
    epochs.push_back(std::move(seeds));
  }
  bench_cache_policies(dataset, sampler, epochs, o);
  print_rss();
}

}  // namespace graphloom::benchmarks
