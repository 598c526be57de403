// A memory and time model of `graphloom partition`, from array shapes read off the .npy
// headers. Every memory term is an array the implementation allocates; METIS's internal
// workspace (its coarsened graph copies) is a multiple of its input adjacency: 7x on the
// 1M-node / 20M-edge ER reference graph, 17x on R-MAT scale 23 (19.7 GB peak), where
// matching leaves most of a power-law graph's edges in every coarser level. The times are
// rates measured on the 2-core development host (docs/benchmarks.md, "Partitioning").
#include "graphloom/partition/estimate.h"

#include <c10/core/ScalarType.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"

namespace graphloom::partition {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kProcessBytes = 150LL << 20;  // libtorch, allocator, stacks
constexpr double kMetisWorkspaceLow = 7.0;      // x the int32 adjacency METIS receives (ER)
constexpr double kMetisWorkspaceHigh = 17.0;    // the same on R-MAT scale 23
// Seconds per unit of work.
constexpr double kBuildPerEdge = 100e-9;        // CSC from an edge list
constexpr double kSymmetrizePerEntry = 62e-9;   // METIS's input, per adjacency entry
constexpr double kBisectionPerEntry = 0.55e-6;  // one level of recursive bisection (ER, R-MAT)
constexpr double kKwayPerEntry = 1.0e-6;        // multilevel k-way (ER, 2 parts)
constexpr double kStreamPerEdge = 40e-9;
constexpr double kWritePerEdge = 120e-9;  // relabel, gather and write one part's edges
constexpr double kBytesPerSecond = 1e9;   // feature rows gathered and written

int64_t array_bytes(const fs::path& file) {
  const NpyHeader header = read_npy_header(file);
  int64_t count = 1;
  for (int64_t d : header.shape) count *= d;
  return count * static_cast<int64_t>(c10::elementSize(header.dtype));
}

}  // namespace

PartitionEstimate estimate_partition(const fs::path& dir, int64_t parts, PartitionMethod method,
                                     int64_t metis_constraints, bool metis_recursive,
                                     bool out_edges) {
  std::ifstream in(dir / "metadata.json");
  GL_CHECK(in.good(), "cannot open '{}'", (dir / "metadata.json").string());
  const auto meta = nlohmann::json::parse(in);
  const int64_t n = meta.at("num_nodes").get<int64_t>();
  const auto& graph = meta.at("graph");
  const int64_t index_bytes = n < (int64_t{1} << 31) ? 4 : 8;
  int64_t edges = 0;
  PartitionEstimate estimate;
  if (graph.contains("edges")) {
    const fs::path file = dir / graph.at("edges").get<std::string>();
    const int64_t file_bytes = array_bytes(file);
    edges = read_npy_header(file).shape.at(0);
    // The mapped edge file, the CSC being built and one count array per thread (2 here).
    estimate.load = file_bytes + 2 * 8 * n;
    estimate.seconds += kBuildPerEdge * static_cast<double>(edges);
  } else {
    edges = read_npy_header(dir / graph.at("indices").get<std::string>()).shape.at(0);
  }
  const int64_t csc = 8 * (n + 1) + index_bytes * edges;
  int64_t features = 0;
  if (meta.contains("node_features")) {
    for (const auto& [name, entry] : meta.at("node_features").items()) {
      if (!entry.is_object()) {
        features += array_bytes(dir / entry.get<std::string>());
        continue;
      }
      features += array_bytes(dir / entry.at("file").get<std::string>());
      if (entry.contains("row_scale"))
        features += array_bytes(dir / entry.at("row_scale").get<std::string>());
    }
  }
  if (meta.contains("labels")) features += 8 * n;

  int64_t assign_low = 0;
  if (method == PartitionMethod::kMetis) {
    const int64_t symmetric = 2 * edges;  // both directions, before duplicates are merged
    const int64_t build = symmetric * (3 * index_bytes) + 2 * 8 * n;  // two halves + CSC
    const int64_t dedupe = symmetric * (2 * index_bytes + 8);         // in, kept ids, out
    const int64_t metis_input = 4 * (n + 1) + 4 * symmetric + 4 * n * metis_constraints;
    const auto workspace = [&](double factor) {
      return std::max({build, dedupe, static_cast<int64_t>(factor * metis_input)});
    };
    estimate.assign = workspace(kMetisWorkspaceHigh);
    assign_low = workspace(kMetisWorkspaceLow);
    const double levels = metis_recursive ? std::ceil(std::log2(static_cast<double>(parts))) : 1;
    estimate.assign_seconds = kSymmetrizePerEntry * static_cast<double>(symmetric) +
                              (metis_recursive ? kBisectionPerEntry * levels : kKwayPerEntry) *
                                  static_cast<double>(symmetric);
  } else {
    estimate.assign = assign_low = 8 * n;
    if (method == PartitionMethod::kStream)
      estimate.assign_seconds = kStreamPerEdge * static_cast<double>(edges);
  }
  // All feature pages end up touched; one part's rows, edge positions, sources and ids live
  // at once, plus the relabelling maps.
  const int64_t part_edges = (edges + parts - 1) / parts;
  estimate.write = features + features / parts + part_edges * (8 + 8 + 8 + index_bytes) + 3 * 8 * n;
  // Out-edges: the reversed graph (indices and int64 ids) stays while the parts are written;
  // building it also holds the edges' positions and both endpoint arrays.
  if (out_edges) estimate.write += (16 + 3 * index_bytes) * edges + 8 * n;
  const auto peak = [&](int64_t assign) {
    return kProcessBytes + csc + std::max({estimate.load, assign, estimate.write});
  };
  estimate.peak = peak(estimate.assign);
  estimate.peak_low = peak(assign_low);
  estimate.seconds += estimate.assign_seconds +
                      kWritePerEdge * static_cast<double>(edges) * (out_edges ? 2 : 1) +
                      static_cast<double>(features) / kBytesPerSecond;
  return estimate;
}

}  // namespace graphloom::partition
