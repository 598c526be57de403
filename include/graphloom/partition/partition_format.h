// The partition directory (DESIGN.md section 4): `partition.json` plus `part-K/` folders with
// the CSC of the in-edges of the part's nodes (sources as relabelled global ids), their
// features, labels, split slices and the maps back to the original ids.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graphloom/graph/csc_graph.h"
#include "graphloom/graph/schema.h"
#include "graphloom/io/dataset.h"
#include "graphloom/partition/partition_book.h"

namespace graphloom::partition {

struct PartitionInfo {
  std::string graph_name;
  int64_t num_parts = 0;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  std::string method;
  uint64_t seed = 0;
  std::string command;
  int64_t halo_hops = 0;
  int64_t edge_cut = 0;
  int64_t num_classes = 0;
  std::vector<int64_t> node_range_ends;  // per part
  std::vector<int64_t> edges_per_part;
  std::vector<int64_t> train_per_part;
  std::map<std::string, std::pair<std::string, int64_t>> features;  // name -> (dtype, dim)
  std::set<std::string> row_scaled_features;  // features stored with a float32 row scale
  std::vector<std::string> splits;            // split names
  bool directed = true;
  std::vector<std::string> edge_splits;  // link prediction: edge split names (relabelled pairs)
  std::vector<std::string> edge_split_times;  // the edge splits whose pairs' times are kept
  // Parts also list the out-edges of their nodes (`partition --out-edges`), for out-direction
  // sampling on the servers; out_edges_per_part counts them.
  bool out_edges = false;
  std::vector<int64_t> out_edges_per_part;
  // Typed graphs: the type names, and per part the relabelled id where each node type's
  // sub-range of the part starts (num_node_types + 1 entries, the last the part's end): a
  // part's nodes stay sorted by type, so every (part, type) owns one contiguous range.
  graph::GraphSchema schema;
  std::vector<std::vector<int64_t>> node_type_ranges;

  PartitionBook book() const { return PartitionBook(node_range_ends); }
};

struct WriteOptions {
  std::string method;
  uint64_t seed = 0;
  std::string command;     // recorded in partition.json
  int64_t halo_hops = 0;   // 0 or 1
  bool out_edges = false;  // also write each part's out-edges
  bool overwrite = false;
};

// Relabels nodes so part k owns one contiguous id range (original order kept inside a part,
// so on a typed graph each node type keeps one sub-range per part),
// assigns every edge to the part of its destination and writes the directory part by part.
// Nothing appears at `out` unless every part was written.
PartitionInfo write_partitions(const io::Dataset& dataset, const at::Tensor& assignment,
                               int64_t parts, const std::filesystem::path& out,
                               const WriteOptions& options);

// Reads and validates `partition.json` (a directory or the file itself).
PartitionInfo read_partition_info(const std::filesystem::path& path);

// One part, memory-mapped.
struct Partition {
  int64_t part = 0;
  int64_t node_begin = 0;  // the part owns relabelled ids node_begin .. node_end - 1
  int64_t node_end = 0;
  // Columns = owned nodes (local), indices = global relabelled ids; typed graphs also carry
  // type_per_edge and node_type_offset (local column offsets of the part's node types).
  graph::CscGraph graph;
  at::Tensor orig_node_ids;  // int64 [owned]: original id of each owned node
  at::Tensor orig_edge_ids;  // int64 [edges]: original id of each edge
  std::map<std::string, at::Tensor> features;
  std::map<std::string, at::Tensor> feature_scales;  // float32 [owned] (row-scaled features)
  at::Tensor labels;
  // int64 [owned]: each owned node's time, when the dataset had node_timestamp (its edges'
  // usable-from times are graph.edge_time, each column sorted by them).
  at::Tensor node_timestamp;
  std::map<std::string, at::Tensor> splits;  // relabelled global ids owned by the part
  at::Tensor halo_nodes;                     // relabelled ids of 1-hop in-neighbors elsewhere
  // With out-edges: columns = owned nodes (local), indices = destinations (global relabelled
  // ids), edge_ids = each edge's global id (the one its destination's part gives it). Each
  // column is in edge id order (typed graphs: grouped by edge type first), as in the reverse of
  // the joined graph. Undefined otherwise.
  graph::CscGraph out_graph;
};

Partition load_partition(const std::filesystem::path& dir, int64_t part);

// The `.npy` file of node feature `name` in part `part` of the partition at `dir` (the
// directory or its partition.json): its rows are the part's own nodes, in order.
std::filesystem::path partition_feature_file(const std::filesystem::path& dir, int64_t part,
                                             const std::string& name);

// One split (e.g. "train") of one part: the relabelled global ids it owns, without loading
// the rest of the part. `info` is read_partition_info(dir).
at::Tensor load_partition_split(const std::filesystem::path& dir, const PartitionInfo& info,
                                int64_t part, const std::string& split);

// Whether part `part` of the partition at `dir` has its columns sorted by time, with each
// edge's usable-from time (edge_time.npy): what temporal sampling on its servers needs.
bool has_edge_times(const std::filesystem::path& dir, int64_t part);

// Typed partitions: the node type of every relabelled id (int64 [num_nodes]), from
// node_type_ranges; undefined for a homogeneous graph.
at::Tensor relabelled_node_types(const PartitionInfo& info);

// One edge split (link prediction) as int64 [M, 2] pairs of relabelled global ids.
at::Tensor load_partition_edge_split(const std::filesystem::path& dir, const PartitionInfo& info,
                                     const std::string& name);
// The int64 [M] times of that split's pairs (Dataset::edge_split_times), or undefined when the
// dataset had none.
at::Tensor load_partition_edge_split_times(const std::filesystem::path& dir,
                                           const PartitionInfo& info, const std::string& name);

// Whole-graph in- and out-degrees of every node (relabelled ids), from the parts' files;
// undefined tensors for partitions written before graphloom recorded them.
std::pair<at::Tensor, at::Tensor> load_partition_degrees(const std::filesystem::path& dir,
                                                         const PartitionInfo& info);

// The parts 0..K-1 (in order) joined back into one Partition over all relabelled nodes: the
// graph that sampling on a single machine sees after partitioning (references for tests and
// benchmarks of the distributed graph). Graph, features and labels only.
Partition join_partitions(const std::vector<Partition>& parts);

}  // namespace graphloom::partition
