// `graphloom bench dist`: the distributed graph on loopback against the same jobs on the local
// graph, in one run. The dataset is split into parts (random assignment) in a temporary
// directory, every part is served by an in-process graph server on 127.0.0.1, and the trainer
// side maps part 0 from its main server's shared memory (as a trainer on machine 0 does) and
// reaches the others by RPC.
#include "graphloom/benchmarks/distributed_bench.h"

#include <unistd.h>

#include <ATen/ATen.h>
#include <algorithm>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>

#include "graphloom/base/error.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/rpc/graph_client.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/generators.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/partition/assign.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/sampling/item_sampler.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"

namespace graphloom::benchmarks {
namespace {

// Seconds of sampling the same `batches` mini-batches with `local` and with `distributed`,
// batch by batch in turn: the host's speed drifts by tens of percent within a minute, and a
// ratio of two runs taken one after the other would measure that drift as well.
std::pair<double, double> time_sampling(const sampling::NeighborSampler& local,
                                        const sampling::NeighborSampler& distributed,
                                        const at::Tensor& seeds, int64_t batch_size,
                                        int64_t batches) {
  double seconds[2] = {0, 0};
  for (int64_t b = 0; b < batches; ++b) {
    const at::Tensor batch = seeds.slice(0, b * batch_size, (b + 1) * batch_size);
    for (int side = 0; side < 2; ++side) {
      Timer timer;
      (side == 0 ? local : distributed).sample(batch, 0, b);
      seconds[side] += timer.seconds();
    }
  }
  return {seconds[0], seconds[1]};
}

// Seconds of the whole pipeline (sampling, features, labels) over `seeds`.
double time_loader(const sampling::NeighborSampler& sampler,
                   const features::FeatureSource& features, const at::Tensor& seeds,
                   int64_t batch_size, const loader::DataLoaderOptions& options) {
  const sampling::ItemSampler items(seeds, {.batch_size = batch_size});
  loader::DataLoader loader(&items, &sampler, &features, options);
  Timer timer;
  loader.start_epoch(0);
  while (loader.next()) {
  }
  return timer.seconds();
}

// time_loader() of both sides in turns of a few batches each, for the reason given above.
std::pair<double, double> time_loaders(const sampling::NeighborSampler& local_sampler,
                                       const features::FeatureSource& local_rows,
                                       const sampling::NeighborSampler& dist_sampler,
                                       const features::FeatureSource& dist_rows,
                                       const at::Tensor& seeds, int64_t batch_size,
                                       const loader::DataLoaderOptions& options) {
  const int64_t seeds_per_turn = 5 * batch_size;
  double seconds[2] = {0, 0};
  for (int64_t begin = 0; begin < seeds.numel(); begin += seeds_per_turn) {
    const at::Tensor turn = seeds.slice(0, begin, begin + seeds_per_turn);
    seconds[0] += time_loader(local_sampler, local_rows, turn, batch_size, options);
    seconds[1] += time_loader(dist_sampler, dist_rows, turn, batch_size, options);
  }
  return {seconds[0], seconds[1]};
}

// Pull throughput of `clients` concurrent callers, each making `calls` pulls of `rows` random
// rows of part 1: aggregate bytes/s and the per-call latencies.
void bench_pulls(const std::string& address, const distributed::TensorSchema& schema, int64_t begin,
                 int64_t end, int clients, const DistBenchOptions& o) {
  std::vector<double> latencies;
  std::mutex mutex;
  int64_t row_bytes = static_cast<int64_t>(c10::elementSize(schema.dtype));
  for (const int64_t size : schema.row_shape) row_bytes *= size;
  Timer timer;
  std::vector<std::future<void>> running;
  for (int c = 0; c < clients; ++c) {
    running.push_back(std::async(std::launch::async, [&, c] {
      const distributed::GraphClient client(address, {.token = "bench"});
      for (int64_t call = 0; call < o.pull_calls; ++call) {
        const at::Tensor ids = at::randint(begin, end, {o.pull_rows}, at::kLong);
        Timer one;
        client.pull("feat", ids, schema);
        std::lock_guard lock(mutex);
        latencies.push_back(one.seconds());
      }
      (void)c;
    }));
  }
  for (auto& r : running) r.get();
  const double seconds = timer.seconds();
  std::sort(latencies.begin(), latencies.end());
  const double bytes = static_cast<double>(clients * o.pull_calls * o.pull_rows * row_bytes);
  fmt::print(
      "  {:>2} client(s): {:7.0f} MB/s   per call ({:.1f} MB): p50 {:6.1f} ms  p99 {:6.1f} ms\n",
      clients, bytes / seconds / 1e6, o.pull_rows * row_bytes / 1e6,
      latencies[latencies.size() / 2] * 1e3,
      latencies[std::min(latencies.size() - 1, latencies.size() * 99 / 100)] * 1e3);
}

}  // namespace

void run_dist_bench(const DistBenchOptions& o) {
  loader::check_pipeline_options(o.loader);
  configure_allocator();
  const io::Dataset dataset = o.data.empty() ? io::generate_planted({})
                                             : io::load_dataset(o.data, {.tables_in_memory = true});
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("graphloom-bench-dist-{}", ::getpid());
  Timer timer;
  partition::write_partitions(dataset, partition::assign_random(dataset.num_nodes(), o.parts, 0),
                              o.parts, dir, {.method = "random", .overwrite = true});
  struct RemoveDir {
    std::filesystem::path path;
    ~RemoveDir() {
      std::error_code ignored;  // a destructor must not throw
      std::filesystem::remove_all(path, ignored);
    }
  } remove_dir{dir};
  std::vector<partition::Partition> parts;
  for (int64_t k = 0; k < o.parts; ++k) parts.push_back(partition::load_partition(dir, k));
  const partition::Partition whole = partition::join_partitions(parts);
  // Every part's server is the main server of its loopback machine, as `launch` starts them: it
  // serves its part from shared memory (on 2 MB pages where --shm-dir gives them), and the
  // DistGraph side reads part 0 from there, as a trainer of machine 0 does.
  const std::string cluster = fmt::format("bench-dist-{}", ::getpid());
  std::vector<std::unique_ptr<distributed::GraphServer>> servers;
  std::vector<std::vector<std::string>> addresses;
  for (int64_t k = 0; k < o.parts; ++k) {
    servers.push_back(std::make_unique<distributed::GraphServer>(
        distributed::ServerOptions{.partition_dir = dir,
                                   .part = k,
                                   .token = "bench",
                                   .role = distributed::ServerRole::kMain,
                                   .cluster_id = cluster}));
    addresses.push_back({servers.back()->address()});
  }
  const auto local_part =
      distributed::SharedPartition::attach(cluster, 0, std::chrono::seconds(10));
  fmt::print("{} nodes, {} edges in {} parts, servers on loopback (ready in {:.1f} s)\n",
             dataset.num_nodes(), dataset.graph.num_edges(), o.parts, timer.seconds());

  const distributed::DistGraph distributed(addresses, {.token = "bench"}, &local_part->part());
  const sampling::LocalNeighborSource local(whole.graph);
  const features::TensorFeatureSource local_rows(
      {{"feat", whole.features.at("feat")}, {"label", whole.labels}});
  const sampling::NeighborSamplerOptions sampler_options{.fanouts = o.fanouts,
                                                         .edge_ids = o.edge_ids};
  const sampling::NeighborSampler local_sampler(&local, sampler_options);
  const sampling::NeighborSampler dist_sampler(&distributed, sampler_options);
  const at::Tensor seeds =
      at::randperm(dataset.num_nodes(), at::kLong).slice(0, 0, o.batches * o.batch_size);
  const double n = static_cast<double>(seeds.numel());

  const auto [local_sample, dist_sample] =
      time_sampling(local_sampler, dist_sampler, seeds, o.batch_size, o.batches);
  fmt::print("sample (fanouts {}, batch {}, {} batches in turn, {} threads, edge ids {})\n",
             fmt::join(o.fanouts, ","), o.batch_size, o.batches, num_threads(),
             o.edge_ids ? "kept" : "dropped, as in training");
  fmt::print("  local graph {:8.0f} seeds/s   DistGraph {:8.0f} seeds/s   ratio {:.2f}x\n",
             n / local_sample, n / dist_sample, local_sample / dist_sample);
  distributed.pulled_bytes(/*reset=*/true);
  const auto [local_load, dist_load] = time_loaders(local_sampler, local_rows, dist_sampler,
                                                    distributed, seeds, o.batch_size, o.loader);
  const auto pulled = static_cast<double>(distributed.pulled_bytes());
  fmt::print(
      "loader (sample + features + labels, in turns of 5 batches, {} worker(s), prefetch {})\n",
      o.loader.num_workers, o.loader.prefetch);
  fmt::print("  local graph {:8.0f} seeds/s   DistGraph {:8.0f} seeds/s   ratio {:.2f}x\n",
             n / local_load, n / dist_load, local_load / dist_load);
  // What bounds the ratio: every remote row crosses the loopback socket.
  fmt::print("  rows pulled from remote parts: {:.0f} MB per batch ({:.0f} MB/s while loading)\n",
             pulled / static_cast<double>(o.batches) / 1e6, pulled / dist_load / 1e6);

  fmt::print("pull of random 'feat' rows of part 1 ({} rows per call)\n", o.pull_rows);
  const distributed::TensorSchema schema = {whole.features.at("feat").scalar_type(),
                                            {whole.features.at("feat").size(1)}};
  for (const int clients : {1, 4, 16}) {
    bench_pulls(addresses[1][0], schema, parts[1].node_begin, parts[1].node_end, clients, o);
  }
  Timer copy_timer;
  const at::Tensor copy = whole.features.at("feat").slice(0, 0, o.pull_rows).clone();
  fmt::print("  (reference: memcpy of the same bytes {:.0f} MB/s)\n",
             static_cast<double>(copy.nbytes()) / copy_timer.seconds() / 1e6);
}

}  // namespace graphloom::benchmarks
