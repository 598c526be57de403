// `graphloom bench load|csc`: figures, each printed next to a reference measured in the same
// run where there is one (other systems' figures are in docs/benchmarks.md, dated).
#include "graphloom/benchmarks/loading_bench.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"
#include "graphloom/base/system.h"
#include "graphloom/base/timer.h"
#include "graphloom/graph/build.h"
#include "graphloom/io/dataset.h"

namespace graphloom::benchmarks {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct EdgeRow {
  int64_t src;
  int64_t dst;
};

}  // namespace

void run_load_bench(const LoadingBenchOptions& options) {
  const std::string& dir = options.dir;
  const int repeats = options.repeats;
  std::vector<double> seconds;
  int64_t edges = 0;
  for (int r = 0; r < repeats; ++r) {
    Timer timer;
    const io::Dataset dataset = io::load_dataset(dir);
    seconds.push_back(timer.seconds());
    edges = dataset.graph.num_edges();
    fmt::print("  run {}: {:.3f} s\n", r + 1, seconds.back());
  }
  const double best = median(seconds);
  fmt::print("load '{}' ({} edges) into a ready-to-sample CSC, features memory-mapped:\n", dir,
             edges);
  fmt::print("  graphloom {:.3f} s (median of {})\n", best, repeats);
  fmt::print("  peak RSS {:.2f} GB\n", peak_rss_bytes() / 1e9);
}

void run_csc_bench(const LoadingBenchOptions& options) {
  const std::string& dir = options.dir;
  const int repeats = options.repeats;
  std::ifstream meta_file(std::filesystem::path(dir) / "metadata.json");
  GL_CHECK(meta_file.good(), "cannot open '{}/metadata.json'", dir);
  const auto meta = nlohmann::json::parse(meta_file);
  GL_CHECK(meta.contains("graph") && meta["graph"].contains("edges"),
           "bench csc needs a dataset whose graph is given as 'edges' (an [E, 2] array)");
  const at::Tensor edges =
      load_npy(std::filesystem::path(dir) / meta["graph"]["edges"].get<std::string>());
  GL_CHECK(edges.dim() == 2 && edges.size(1) == 2, "edges must have shape [E, 2]");
  const int64_t num_nodes = meta.at("num_nodes").get<int64_t>();
  const at::Tensor edges64 = edges.to(at::kLong).contiguous();
  const int64_t m = edges64.size(0);

  std::vector<double> build_seconds;
  std::vector<double> sort_seconds;
  std::vector<EdgeRow> rows(static_cast<std::size_t>(m));
  for (int r = 0; r < repeats; ++r) {
    Timer timer;
    graph::CooInput input{.src = edges.select(1, 0),
                          .dst = edges.select(1, 1),
                          .num_nodes = num_nodes,
                          .keep_edge_ids = false};
    const graph::CscGraph graph = graph::csc_from_coo(input);
    build_seconds.push_back(timer.seconds());

    std::memcpy(rows.data(), edges64.data_ptr<int64_t>(), m * sizeof(EdgeRow));
    timer.reset();
    std::sort(rows.begin(), rows.end(), [](const EdgeRow& x, const EdgeRow& y) {
      return x.dst != y.dst ? x.dst < y.dst : x.src < y.src;
    });
    sort_seconds.push_back(timer.seconds());
  }
  const double build = median(build_seconds);
  const double sort = median(sort_seconds);
  fmt::print("CSC build of {} edges over {} nodes ({} threads, median of {}):\n", m, num_nodes,
             num_threads(), repeats);
  fmt::print("  csc_from_coo  {:.3f} s   std::sort of the edge array {:.3f} s   speedup {:.1f}x\n",
             build, sort, sort / build);
}

}  // namespace graphloom::benchmarks
