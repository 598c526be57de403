// The demo job: generate, partition, launch a loopback cluster, report.
#include "graphloom/distributed/runtime/demo_job.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/base/timer.h"
#include "graphloom/distributed/runtime/cluster_launch.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/io/generators.h"
#include "graphloom/partition/partition_job.h"

namespace graphloom::distributed {
namespace {

namespace fs = std::filesystem;

// Ten planted classes whose features are buried in noise and whose edges are only half within
// the class: the features alone classify poorly (nearest class centroid, the best a model that
// ignores the graph can do here, gets about 0.4), a GNN that averages well-sampled
// neighborhoods gets far more, and a broken sampler or a wrong feature row shows at once.
io::PlantedOptions demo_graph(const DemoOptions& options) {
  return {.num_nodes = options.num_nodes,
          .num_classes = 10,
          .avg_degree = 12,
          .homophily = 0.5,
          .feat_dim = 32,
          .feature_noise = 6.0,
          .train_fraction = 0.1,
          .valid_fraction = 0.1,
          .seed = options.seed};
}

// Test accuracy of the nearest class centroid over the features alone.
double feature_only_accuracy(const io::Dataset& dataset) {
  const at::Tensor features = dataset.node_features.at("feat").to(at::kFloat);
  const at::Tensor train = dataset.splits.at("train");
  const at::Tensor test = dataset.splits.at("test");
  const at::Tensor train_labels = dataset.labels.index_select(0, train);
  at::Tensor centroids = at::zeros({dataset.num_classes, features.size(1)}, at::kFloat);
  centroids.index_add_(0, train_labels, features.index_select(0, train));
  const at::Tensor counts = at::bincount(train_labels, {}, dataset.num_classes).to(at::kFloat);
  centroids.div_(counts.clamp_min(1).unsqueeze(1));
  const at::Tensor nearest = at::cdist(features.index_select(0, test), centroids).argmin(1);
  return nearest.eq(dataset.labels.index_select(0, test)).to(at::kDouble).mean().item<double>();
}

// A file only its owner can read, as a token file must be.
void write_private_file(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  GL_CHECK(fd >= 0, "cannot create '{}': {}", path.string(), std::strerror(errno));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  GL_CHECK(written, "cannot write '{}'", path.string());
}

// Machine m of the loopback cluster listens on 127.0.0.1, ports base + 10 m onwards.
void write_ip_config(const fs::path& path, int machines) {
  const int base = find_free_port();
  std::ofstream out(path);
  for (int m = 0; m < machines; ++m) out << "127.0.0.1 " << base + 10 * m << "\n";
  GL_CHECK(out.good(), "cannot write '{}'", path.string());
}

// Seconds of validation over the epochs of a metrics log (JSON lines).
double evaluation_seconds(const fs::path& metrics_log) {
  std::ifstream in(metrics_log);
  double total = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.contains("time") && record["time"].contains("eval")) {
      total += record["time"]["eval"].get<double>();
    }
  }
  return total;
}

void print_summary(const DemoOptions& options, const nlohmann::json& result,
                   double feature_accuracy, double edge_cut, double seconds[3]) {
  const fs::path& out = options.out;
  const nlohmann::json& t = result.at("time");
  fmt::print(
      "\ngraphloom demo: {} nodes in {} METIS parts, {} loopback machines x ({} graph servers "
      "+ 1 trainer), GraphSAGE data-parallel\n"
      "  test accuracy    {:.4f}   (the features alone, nearest class centroid: {:.4f})\n"
      "  validation       {:.4f}   best of {} epochs at epoch {}\n"
      "  throughput       {:.0f} seeds/s over {} trainers\n"
      "  time (s)         generate {:.1f}  partition {:.1f}  cluster {:.1f} (training {:.1f}, "
      "validation {:.1f})\n"
      "  trainer 0 (s)    sample {:.1f}  fetch {:.1f}  waiting {:.1f}  forward {:.1f}  backward "
      "{:.1f}  optimizer {:.1f}  allreduce not hidden {:.1f}\n"
      "  partition        {} (edge cut {:.1f}%)\n"
      "  checkpoint       {}\n"
      "  metrics          {} (per epoch), {} (final)\n",
      options.num_nodes, options.machines, options.machines, options.servers_per_machine,
      result.at("test_acc").get<double>(), feature_accuracy,
      result.at("best_val_acc").get<double>(), result.at("epochs_run").get<int64_t>(),
      result.at("best_epoch").get<int64_t>(), result.at("seeds_per_second").get<double>(),
      result.at("world_size").get<int>(), seconds[0], seconds[1], seconds[2],
      result.at("train_seconds").get<double>(), evaluation_seconds(out / "metrics.jsonl"),
      t.at("sample").get<double>(), t.at("fetch").get<double>(), t.at("wait").get<double>(),
      t.at("forward").get<double>(), t.at("backward").get<double>(),
      t.at("optimizer").get<double>(), t.at("allreduce").get<double>(), (out / "parts").string(),
      100 * edge_cut, (out / "checkpoint.pt").string(), (out / "metrics.jsonl").string(),
      (out / "result.json").string());
}

}  // namespace

int run_demo(const DemoOptions& options) {
  if (options.num_nodes < 1000) {
    throw OptionError("num_nodes", fmt::format("must be at least 1000, got {}", options.num_nodes));
  }
  if (options.epochs < 1) throw OptionError("epochs", "must be at least 1");
  if (options.machines < 1 || options.servers_per_machine < 1) {
    throw OptionError("machines", "and `servers_per_machine` must be at least 1");
  }
  const fs::path& out = options.out;
  if (fs::exists(out)) {
    if (!options.force) {
      throw UsageError(
          fmt::format("'{}' already exists (pass --force to replace it)", out.string()));
    }
    fs::remove_all(out);
  }
  fs::create_directories(out);
  double seconds[3] = {};
  Timer timer;
  spdlog::info("demo [1/3] generating a {}-node planted graph into '{}'", options.num_nodes,
               (out / "data").string());
  const io::Dataset dataset = io::generate_planted(demo_graph(options));
  io::save_dataset(dataset, out / "data", /*overwrite=*/false);
  const double feature_accuracy = feature_only_accuracy(dataset);
  seconds[0] = timer.seconds();

  timer.reset();
  spdlog::info("demo [2/3] partitioning it into {} parts with METIS", options.machines);
  const partition::PartitionInfo parts =
      partition::partition_dataset(dataset, {.data = (out / "data").string(),
                                             .out = (out / "parts").string(),
                                             .parts = options.machines,
                                             .seed = options.seed});
  seconds[1] = timer.seconds();

  timer.reset();
  spdlog::info("demo [3/3] starting {} loopback machines and training (Ctrl-C stops them all)",
               options.machines);
  write_private_file(out / "token", random_token() + "\n");
  write_ip_config(out / "ip.txt", options.machines);
  const auto path = [&](const char* name) { return (out / name).string(); };
  // At least ~40 steps per epoch on a small graph; 1024 seeds a batch from 80k training nodes.
  const int64_t per_trainer = dataset.splits.at("train").numel() / options.machines;
  const int64_t batch_size = std::clamp<int64_t>(per_trainer / 40, 32, 1024);
  const int code = launch_cluster({.ip_config = path("ip.txt"),
                                   .part_config = path("parts"),
                                   .num_servers = options.servers_per_machine,
                                   .cluster_id = fmt::format("demo-{}", ::getpid()),
                                   .token_file = path("token"),
                                   .command = {"graphloom",
                                               "train",
                                               "--epochs",
                                               std::to_string(options.epochs),
                                               "--fanouts",
                                               "10,10",
                                               "--batch-size",
                                               std::to_string(batch_size),
                                               "--hidden",
                                               "64",
                                               "--lr",
                                               "0.003",
                                               "--seed",
                                               std::to_string(options.seed),
                                               "--no-progress",
                                               "--checkpoint",
                                               path("checkpoint.pt"),
                                               "--metrics-log",
                                               path("metrics.jsonl"),
                                               "--result-json",
                                               path("result.json")}});
  seconds[2] = timer.seconds();
  if (code != 0) return code;
  std::ifstream result_file(out / "result.json");
  GL_CHECK(result_file.good(), "the trainers ended without writing '{}'", path("result.json"));
  const double edge_cut = static_cast<double>(parts.edge_cut) /
                          static_cast<double>(std::max<int64_t>(parts.num_edges, 1));
  print_summary(options, nlohmann::json::parse(result_file), feature_accuracy, edge_cut, seconds);
  return 0;
}

}  // namespace graphloom::distributed
