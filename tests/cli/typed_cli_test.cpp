// Typed graphs from the command line: node classification with relational models on the
// generated typed graph, per-edge-type fanouts, and errors for bad edge-type names.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace graphloom {
namespace {

using testing::run_graphloom;

double test_accuracy(const std::string& output) {
  const auto at = output.find("test accuracy ");
  return at == std::string::npos ? -1 : std::stod(output.substr(at + 14, 6));
}

// The class of an item is told by the users who like it; its related items are noise. The
// relational models can tell the two relations apart, homogeneous GraphSAGE mixes them.
TEST(CliTyped, RelationalModelsLearnThePlantedRelationOfATypedGraph) {
  testing::TempDir dir;
  auto result =
      run_graphloom("generate typed-planted --num-items 6000 --num-users 1500 --out t", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string common =
      "train --data t --fanouts 10,10 --epochs 12 --hidden 32 --lr 0.01 --no-progress ";
  result = run_graphloom(common + "--model rgcn", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const double rgcn = test_accuracy(result.output);
  result = run_graphloom(common + "--model rsage", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const double rsage = test_accuracy(result.output);
  result = run_graphloom(common + "--model sage", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const double sage = test_accuracy(result.output);
  EXPECT_GT(rgcn, 0.75) << result.output;  // 5 classes: chance is 0.2
  EXPECT_GT(rsage, 0.75);
  EXPECT_GT(rgcn, sage + 0.05) << "rgcn " << rgcn << " sage " << sage;
  // Per-edge-type fanouts: no related items at all.
  result = run_graphloom(common + "--model rgcn --edge-type-fanout related=0,0", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_GT(test_accuracy(result.output), 0.75) << result.output;

  result = run_graphloom(common + "--edge-type-fanout rated=5,5", dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("unknown edge type 'rated' (the graph has: user:likes:item, "
                               "item:liked_by:user, item:related:item)"),
            std::string::npos)
      << result.output;
  result = run_graphloom(common + "--edge-type-fanout likes=5", dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("names 1 layers but --fanouts names 2"), std::string::npos);
  ASSERT_EQ(run_graphloom("generate planted --num-nodes 1000 --out g", dir.path()).exit_code, 0);
  // A model the dataset cannot take is a usage error naming the flag.
  result = run_graphloom("train --data g --model rgcn --epochs 1 --no-progress", dir.path());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("--model rgcn needs a typed graph"), std::string::npos)
      << result.output;
  result = run_graphloom("train --data g --edge-type-fanout likes=1,1,1 --no-progress", dir.path());
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("has no edge types"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace graphloom
