// A graph whose labels can only be read from the future, for the temporal CLI tests: seeds
// without features whose same-class neighbors all come later than them.
#pragma once

#include <ATen/ATen.h>

#include <filesystem>
#include <vector>

#include "graphloom/graph/build.h"
#include "graphloom/io/dataset.h"

namespace graphloom::testing {

// Seed v has kPerSide in-edges from helpers of its own class at time 1e6 (the future) and
// kPerSide from helpers of random class at time -1 (the past): its label is in its future.
// Splits: 600 / 200 / 200 of the seeds. `typed`: one node type and two edge types, each edge's
// drawn at random, so that either relation carries both the future and the past.
inline void write_leaky_dataset(const std::filesystem::path& dir, bool typed = false) {
  constexpr int64_t kSeeds = 1000;    // nodes 0..999, at times 0..999, with no features
  constexpr int64_t kHelpers = 1000;  // nodes 1000..1999: a one-hot feature of their class
  constexpr int64_t kPerSide = 8;     // in-edges per seed from the future and from the past
  at::manual_seed(11);
  const int64_t n = kSeeds + kHelpers;
  const at::Tensor labels = at::randint(2, {n}, at::kLong);
  const at::Tensor helper_class = labels.slice(0, kSeeds);
  std::vector<at::Tensor> src, dst;
  for (int64_t cls = 0; cls < 2; ++cls) {
    const at::Tensor same = (helper_class == cls).nonzero().squeeze(1) + kSeeds;
    const at::Tensor seeds = (labels.slice(0, 0, kSeeds) == cls).nonzero().squeeze(1);
    const at::Tensor pick = at::randint(same.numel(), {seeds.numel() * kPerSide}, at::kLong);
    src.push_back(same.index_select(0, pick));
    dst.push_back(seeds.repeat_interleave(kPerSide));
  }
  src.push_back(at::randint(kSeeds, n, {kSeeds * kPerSide}, at::kLong));
  dst.push_back(at::arange(kSeeds, at::kLong).repeat_interleave(kPerSide));
  const at::Tensor is_future = at::cat(
      {at::ones({kSeeds * kPerSide}, at::kBool), at::zeros({kSeeds * kPerSide}, at::kBool)});
  io::Dataset dataset;
  dataset.name = "leaky";
  const int64_t num_edges = 2 * kSeeds * kPerSide;
  dataset.graph = graph::csc_from_coo(
      {.src = at::cat(src),
       .dst = at::cat(dst),
       .num_nodes = n,
       .edge_types = typed ? at::randint(2, {num_edges}, at::kLong).to(at::kChar) : at::Tensor(),
       .edge_time = at::where(is_future, int64_t{1000000}, int64_t{-1}),
       .keep_edge_ids = false});
  if (typed) {
    dataset.graph.node_type_offset = at::tensor({int64_t{0}, n}, at::kLong);
    dataset.schema.node_types = {"node"};
    dataset.schema.edge_types = {{"node", "cites", "node"}, {"node", "follows", "node"}};
  }
  at::Tensor features = at::zeros({n, 2}, at::kFloat);
  features.slice(0, kSeeds).scatter_(1, helper_class.unsqueeze(1), 1.0);
  dataset.node_features["feat"] = features;
  dataset.labels = labels;
  dataset.num_classes = 2;
  const at::Tensor order = at::randperm(kSeeds, at::kLong);
  dataset.splits = {{"train", order.slice(0, 0, 600)},
                    {"valid", order.slice(0, 600, 800)},
                    {"test", order.slice(0, 800)}};
  dataset.node_timestamp =
      at::cat({at::arange(kSeeds, at::kLong), at::full({kHelpers}, -1, at::kLong)});
  io::save_dataset(dataset, dir, /*overwrite=*/false);
}

}  // namespace graphloom::testing
