// Writing a partition directory: relabel, then one part at a time (peak memory is one part's
// arrays on top of the input graph).
#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "background_writer.h"
#include "graphloom/base/atomic_output.h"
#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"
#include "graphloom/base/timer.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/csc_graph.h"
#include "graphloom/graph/temporal.h"
#include "graphloom/partition/assign.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::partition {

namespace fs = std::filesystem;

namespace {

// CSC positions of the in-edges of `nodes`, concatenated in node order.
at::Tensor edge_positions(const graph::CscGraph& graph, const at::Tensor& nodes) {
  const at::Tensor starts = graph.indptr.index_select(0, nodes);
  const at::Tensor degrees = graph.indptr.index_select(0, nodes + 1) - starts;
  const at::Tensor offsets = at::cumsum(degrees, 0) - degrees;  // exclusive scan
  const int64_t total = degrees.sum().item<int64_t>();
  return at::repeat_interleave(starts - offsets, degrees, /*dim=*/0, /*output_size=*/total) +
         at::arange(total, at::kLong);
}

// The whole graph reversed in the new ids, from the edges in partitioned order (grouped by
// the destination's part): part k's out-edges are then the columns of its node range, each
// edge's id is its position in that order, and each column lists its edges in id order.
graph::CscGraph reversed_in_new_ids(const graph::CscGraph& graph, const at::Tensor& order,
                                    const at::Tensor& old_to_new, c10::ScalarType index_type) {
  const at::Tensor positions = edge_positions(graph, order);
  graph::CooInput input;
  input.num_nodes = graph.num_nodes;
  input.dst = old_to_new.index_select(0, graph.indices.index_select(0, positions).to(at::kLong))
                  .to(index_type);
  const at::Tensor degrees =
      graph.indptr.index_select(0, order + 1) - graph.indptr.index_select(0, order);
  input.src = at::repeat_interleave(at::arange(graph.num_nodes, index_type), degrees, /*dim=*/0,
                                    /*output_size=*/positions.numel());
  if (graph.has_weights()) input.weights = graph.weights.index_select(0, positions);
  // Typed graphs: each column grouped by type, as the sampler needs (ids stay positions).
  if (graph.type_per_edge.defined())
    input.edge_types = graph.type_per_edge.index_select(0, positions);
  return graph::csc_from_coo(input);  // edge ids: input positions
}

}  // namespace

PartitionInfo write_partitions(const io::Dataset& dataset, const at::Tensor& assignment,
                               int64_t parts, const fs::path& out, const WriteOptions& options) {
  // Temporal sampling reads each part's columns in time order: sorted once here, so the parts
  // (and the servers that map them) carry columns ready for it, with each edge's usable-from
  // time in edge_time.npy.
  const bool timed = dataset.node_timestamp.defined() || dataset.graph.edge_time.defined();
  const graph::CscGraph graph =
      timed ? graph::sorted_by_time(dataset.graph, dataset.node_timestamp, dataset.graph.edge_time)
            : dataset.graph;
  const int64_t n = graph.num_nodes;
  GL_CHECK(assignment.numel() == n && assignment.scalar_type() == at::kLong,
           "assignment must be int64 [num_nodes]");
  AtomicDirectory directory(out, options.overwrite);
  const Timer timer;

  // New id order: nodes grouped by part, original order inside a part.
  const at::Tensor order =
      std::get<1>(at::sort(assignment, /*stable=*/c10::optional<bool>(true), /*dim=*/0));
  at::Tensor old_to_new = at::empty({n}, at::kLong);
  old_to_new.index_put_({order}, at::arange(n, at::kLong));
  const at::Tensor counts = at::bincount(assignment, {}, parts);
  const at::Tensor ends = at::cumsum(counts, 0);
  spdlog::info("relabelled {} nodes into part order ({:.1f} s)", n, timer.seconds());

  PartitionInfo info;
  info.graph_name = dataset.name;
  info.num_parts = parts;
  info.num_nodes = n;
  info.num_edges = graph.num_edges();
  info.method = options.method;
  info.seed = options.seed;
  info.command = options.command;
  info.halo_hops = options.halo_hops;
  info.num_classes = dataset.num_classes;
  info.edge_cut = edge_cut(graph, assignment);
  info.node_range_ends.assign(ends.data_ptr<int64_t>(), ends.data_ptr<int64_t>() + parts);
  info.schema = dataset.schema;
  info.directed = dataset.directed;
  // Link prediction: the pairs of every edge split, relabelled, at the top of the directory.
  for (const auto& [name, pairs] : dataset.edge_splits) {
    save_npy(directory.staging() / fmt::format("edge_split_{}.npy", name),
             old_to_new.index_select(0, pairs.reshape({-1})).view({-1, 2}));
    info.edge_splits.push_back(name);
  }
  for (const auto& [name, times] : dataset.edge_split_times) {
    save_npy(directory.staging() / fmt::format("edge_split_{}_time.npy", name), times.contiguous());
    info.edge_split_times.push_back(name);
  }
  const bool typed = !dataset.schema.empty();
  const at::Tensor node_types =
      typed ? graph::node_types_of(graph, at::arange(n, at::kLong)) : at::Tensor();
  for (const auto& [name, feature] : dataset.node_features) {
    info.features[name] = {dtype_name(feature.scalar_type()),
                           feature.numel() / std::max<int64_t>(n, 1)};
    if (dataset.node_feature_scales.count(name)) info.row_scaled_features.insert(name);
  }
  const auto index_type = graph::index_dtype_for(n);
  const at::Tensor train =
      dataset.splits.count("train") ? dataset.splits.at("train") : at::Tensor();

  // Whole-graph degrees of each part's nodes: what GCN's normalization needs and no part can
  // count alone (out-edges leave through every part).
  const at::Tensor in_degrees = graph.in_degrees();
  const at::Tensor out_degrees = graph.out_degrees();
  info.out_edges = options.out_edges;
  const graph::CscGraph reversed = options.out_edges
                                       ? reversed_in_new_ids(graph, order, old_to_new, index_type)
                                       : graph::CscGraph();
  // 512 MB queued: the biggest array of a part (its feature rows) can wait while the next
  // arrays are computed.
  BackgroundWriter writer(int64_t{512} << 20);
  for (int64_t k = 0; k < parts; ++k) {
    const int64_t begin = k == 0 ? 0 : info.node_range_ends[k - 1];
    const int64_t end = info.node_range_ends[k];
    const at::Tensor nodes = order.slice(0, begin, end);
    const fs::path dir = directory.staging() / fmt::format("part-{}", k);
    fs::create_directories(dir);
    const at::Tensor positions = edge_positions(graph, nodes);
    const at::Tensor degrees =
        graph.indptr.index_select(0, nodes + 1) - graph.indptr.index_select(0, nodes);
    const at::Tensor sources =
        old_to_new.index_select(0, graph.indices.index_select(0, positions).to(at::kLong));
    writer.save(dir / "indptr.npy", at::cat({at::zeros({1}, at::kLong), at::cumsum(degrees, 0)}));
    writer.save(dir / "indices.npy", sources.to(index_type));
    writer.save(dir / "orig_edge_ids.npy",
                graph.has_edge_ids() ? graph.edge_ids.index_select(0, positions) : positions);
    writer.save(dir / "orig_node_ids.npy", nodes);
    writer.save(dir / "in_degree.npy", in_degrees.index_select(0, nodes));
    writer.save(dir / "out_degree.npy", out_degrees.index_select(0, nodes));
    if (graph.has_weights())
      writer.save(dir / "weights.npy", graph.weights.index_select(0, positions));
    if (timed) writer.save(dir / "edge_time.npy", graph.edge_time.index_select(0, positions));
    if (dataset.node_timestamp.defined())
      writer.save(dir / "node_timestamp.npy", dataset.node_timestamp.index_select(0, nodes));
    if (typed) {
      // Positions follow each column's order, so the part's columns stay sorted by type.
      writer.save(dir / "type_per_edge.npy", graph.type_per_edge.index_select(0, positions));
      const at::Tensor per_type =
          at::bincount(node_types.index_select(0, nodes), {}, dataset.schema.num_node_types());
      std::vector<int64_t> range{begin};
      for (int64_t t = 0; t < dataset.schema.num_node_types(); ++t) {
        range.push_back(range.back() + per_type[t].item<int64_t>());
      }
      info.node_type_ranges.push_back(range);
    }
    for (const auto& [name, feature] : dataset.node_features) {
      writer.save(dir / fmt::format("feat_{}.npy", name), feature.index_select(0, nodes));
      if (info.row_scaled_features.count(name)) {
        writer.save(dir / fmt::format("feat_{}_row_scale.npy", name),
                    dataset.node_feature_scales.at(name).index_select(0, nodes));
      }
    }
    if (dataset.labels.defined())
      writer.save(dir / "labels.npy", dataset.labels.index_select(0, nodes));
    for (const auto& [name, ids] : dataset.splits) {
      const at::Tensor relabelled = old_to_new.index_select(0, ids);
      const at::Tensor mine =
          relabelled.masked_select((relabelled >= begin).logical_and(relabelled < end));
      writer.save(dir / fmt::format("{}_idx.npy", name), std::get<0>(at::sort(mine)));
    }
    if (options.halo_hops > 0) {
      const at::Tensor outside =
          sources.masked_select((sources < begin).logical_or(sources >= end));
      writer.save(dir / "halo_nodes.npy", std::get<0>(at::_unique(outside, /*sorted=*/true)));
    }
    if (options.out_edges) {
      const at::Tensor out_indptr = reversed.indptr.slice(0, begin, end + 1);
      const int64_t first = out_indptr[0].item<int64_t>();
      const int64_t last = out_indptr[-1].item<int64_t>();
      writer.save(dir / "out_indptr.npy", out_indptr - first);
      writer.save(dir / "out_indices.npy", reversed.indices.slice(0, first, last));
      writer.save(dir / "out_edge_ids.npy", reversed.edge_ids.slice(0, first, last));
      if (graph.has_weights())
        writer.save(dir / "out_weights.npy", reversed.weights.slice(0, first, last));
      if (typed)
        writer.save(dir / "out_type_per_edge.npy", reversed.type_per_edge.slice(0, first, last));
      info.out_edges_per_part.push_back(last - first);
    }
    info.edges_per_part.push_back(positions.numel());
    info.train_per_part.push_back(
        train.defined() ? (assignment.index_select(0, train) == k).sum().item<int64_t>() : 0);
    spdlog::info("part {}/{}: {} nodes, {} edges ({:.1f} s)", k + 1, parts, end - begin,
                 positions.numel(), timer.seconds());
  }

  writer.finish();

  nlohmann::json features = nlohmann::json::object();
  for (const auto& [name, schema] : info.features) {
    features[name] = {{"dtype", schema.first}, {"dim", schema.second}};
    if (info.row_scaled_features.count(name)) features[name]["row_scale"] = true;
  }
  nlohmann::json meta = {{"format", "graphloom-partition"},
                         {"version", 1},
                         {"graph_name", info.graph_name},
                         {"num_parts", parts},
                         {"num_nodes", n},
                         {"num_edges", info.num_edges},
                         {"method", info.method},
                         {"seed", info.seed},
                         {"command", info.command},
                         {"halo_hops", info.halo_hops},
                         {"edge_cut", info.edge_cut},
                         {"num_classes", info.num_classes},
                         {"node_range_ends", info.node_range_ends},
                         {"edges_per_part", info.edges_per_part},
                         {"train_per_part", info.train_per_part},
                         {"node_features", features},
                         {"directed", info.directed},
                         {"out_edges", info.out_edges},
                         {"edge_splits", info.edge_splits},
                         {"edge_split_times", info.edge_split_times},
                         {"splits", [&] {
                            std::vector<std::string> names;
                            for (const auto& [name, ids] : dataset.splits) names.push_back(name);
                            return names;
                          }()}};
  if (info.out_edges) meta["out_edges_per_part"] = info.out_edges_per_part;
  if (typed) {
    nlohmann::json edge_types = nlohmann::json::array();
    for (const graph::EdgeType& type : info.schema.edge_types) {
      edge_types.push_back({type.src, type.relation, type.dst});
    }
    meta["node_types"] = info.schema.node_types;
    meta["edge_types"] = edge_types;
    meta["node_type_ranges"] = info.node_type_ranges;
  }
  const std::string text = meta.dump(1) + "\n";
  AtomicFile file(directory.staging() / "partition.json");
  file.write(text.data(), text.size());
  file.commit();
  directory.commit();
  return info;
}

}  // namespace graphloom::partition
