// The graphloom dataset directory (DESIGN.md section 4): `metadata.json` plus `.npy` arrays,
// all memory-mappable. This is what every command reads and what importers and generators write.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <string>

#include "graphloom/graph/csc_graph.h"
#include "graphloom/graph/schema.h"

namespace graphloom::io {

struct Dataset {
  std::string name;
  bool directed = true;
  graph::CscGraph graph;
  // Typed graphs: the names of graph.node_type_offset's node types and of type_per_edge's edge
  // types; empty for homogeneous graphs.
  graph::GraphSchema schema;
  // Node feature name -> tensor [num_nodes, dim] (usually memory-mapped): float32/64, or
  // encoded as float16, bfloat16 or int8 (features/row_codec.h).
  std::map<std::string, at::Tensor> node_features;
  // Feature name -> float32 [num_nodes] scale of each row (required for int8, optional for
  // floats): the feature's value is row x scale.
  std::map<std::string, at::Tensor> node_feature_scales;
  // Feature name -> the `.npy` file it was loaded from (load_dataset; empty for a dataset made
  // in memory): what a disk feature source reads.
  std::map<std::string, std::filesystem::path> node_feature_files;
  // Optional int64 [num_nodes]: each node's time (node_timestamp.npy), for temporal sampling:
  // a seed's neighbors are no later than it. Edge times live in graph.edge_time.
  at::Tensor node_timestamp;
  // int64 [num_nodes], -1 = unlabeled; undefined when the dataset has no labels.
  at::Tensor labels;
  int64_t num_classes = 0;
  // Split name ("train", "valid", "test", ...) -> int64 node ids.
  std::map<std::string, at::Tensor> splits;
  // Link prediction: split name -> int64 [M, 2] node pairs (src, dst). "train", "valid" and
  // "test" are positives, "valid_neg" and "test_neg" negatives; `graph` then holds only the
  // message-passing (training) edges.
  std::map<std::string, at::Tensor> edge_splits;
  // Optional, per edge split: int64 [M] time of each pair in unix seconds (a rating's
  // timestamp), for time-aware training (`--recency-half-life` counts days of 86,400 s).
  std::map<std::string, at::Tensor> edge_split_times;

  int64_t num_nodes() const { return graph.num_nodes; }
};

// The "format" value of metadata.json.
inline constexpr const char* kDatasetFormat = "graphloom-dataset";

struct LoadOptions {
  bool strict = false;     // unknown metadata keys are errors
  bool memory_map = true;  // features and splits point into the files (no copy)
  // The arrays read at random (a CSC graph's indptr and indices, the feature tables) are read
  // into memory on huge pages even with memory_map, when all of them together fit in half the
  // memory available (cgroup limits included): on a file's 4 KB pages most random reads also
  // miss the TLB (`bench sample` / `bench gather --data er`: docs/benchmarks.md). Otherwise
  // they stay memory-mapped. Processes that share a machine's page cache (several local
  // trainers) are better off mapped.
  bool tables_in_memory = false;
  bool keep_edge_ids = false;  // for an `edges` graph: keep each CSC edge's row in edges.npy
};

// Loads and validates a dataset directory. Every error names the file and what was expected.
Dataset load_dataset(const std::filesystem::path& dir, const LoadOptions& options = {});

// Validates the parts of a dataset against each other (shapes, dtypes, id ranges).
void validate_dataset(const Dataset& dataset);

// Writes `dataset` to `dir` (graph in CSC form). The directory appears only when complete;
// an existing `dir` is refused unless `overwrite`.
void save_dataset(const Dataset& dataset, const std::filesystem::path& dir, bool overwrite);

}  // namespace graphloom::io
