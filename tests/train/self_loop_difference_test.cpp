// A partitioned GCN trains on the graph as partitioned, while `train --data` adds self-loops
// for it: self_loop_difference says so, and is silent when both paths see the same graph.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "graphloom/train/partitioned_training.h"

namespace graphloom::train {
namespace {

// Part 1 owns nodes 10, 11, 12; `loops` lists the owned nodes that have a self-loop.
partition::Partition part_with_loops(const std::vector<int64_t>& loops) {
  std::vector<int64_t> indptr{0}, indices;
  for (int64_t node = 10; node < 13; ++node) {
    indices.push_back(node - 10);  // an in-edge from a node of part 0
    if (std::find(loops.begin(), loops.end(), node) != loops.end()) indices.push_back(node);
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  partition::Partition part;
  part.part = 1;
  part.node_begin = 10;
  part.node_end = 13;
  part.graph.num_nodes = 3;  // columns: the owned nodes; indices: global ids
  part.graph.indptr = at::tensor(indptr, at::kLong);
  part.graph.indices = at::tensor(indices, at::kLong).to(at::kInt);
  return part;
}

TrainOptions with_model(nn::ModelKind kind, SelfLoops self_loops = SelfLoops::kAuto) {
  TrainOptions options;
  options.model.kind = kind;
  options.self_loops = self_loops;
  return options;
}

TEST(SelfLoopDifference, GcnOnAPartitionWithoutLoopsSaysWhatDiffersAndHowToMatch) {
  const std::string message =
      self_loop_difference(part_with_loops({10, 12}), with_model(nn::ModelKind::kGcn));
  EXPECT_NE(message.find("1 of part 1's 3 nodes have no self-loop"), std::string::npos) << message;
  EXPECT_NE(message.find("convert --self-loops add"), std::string::npos) << message;
  EXPECT_NE(
      self_loop_difference(part_with_loops({}), with_model(nn::ModelKind::kSage, SelfLoops::kAdd)),
      "");
}

TEST(SelfLoopDifference, SilentWhenBothPathsTrainOnTheSameGraph) {
  EXPECT_EQ(self_loop_difference(part_with_loops({10, 11, 12}), with_model(nn::ModelKind::kGcn)),
            "");
  EXPECT_EQ(self_loop_difference(part_with_loops({}), with_model(nn::ModelKind::kSage)), "");
  EXPECT_EQ(
      self_loop_difference(part_with_loops({}), with_model(nn::ModelKind::kGcn, SelfLoops::kKeep)),
      "");
}

}  // namespace
}  // namespace graphloom::train
