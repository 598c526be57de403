// Typed graphs: edge-type names, schema checks, and the per-column sort by edge type.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/base/error.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/schema.h"

namespace graphloom::graph {
namespace {

// Nodes 0-1 are "user", 2-4 "item"; user -rates-> item, item -rated_by-> user,
// item -similar-> item. Edge rows are given out of type order on purpose.
struct TypedExample {
  CscGraph graph;
  GraphSchema schema;
};

TypedExample typed_example() {
  CooInput input;
  input.src = at::tensor({2, 0, 1, 3, 0, 4, 2}, at::kLong);
  input.dst = at::tensor({3, 3, 3, 0, 2, 3, 1}, at::kLong);
  input.edge_types = at::tensor({2, 0, 0, 1, 0, 2, 1}, at::kChar);
  input.num_nodes = 5;
  TypedExample example;
  example.graph = csc_from_coo(input);
  example.graph.node_type_offset = at::tensor({0, 2, 5}, at::kLong);
  example.schema.node_types = {"user", "item"};
  example.schema.edge_types = {
      {"user", "rates", "item"}, {"item", "rated_by", "user"}, {"item", "similar", "item"}};
  return example;
}

TEST(GraphSchema, EdgeTypesAreFoundByRelationOrCanonicalName) {
  const GraphSchema schema = typed_example().schema;
  EXPECT_EQ(schema.edge_type_id("rates"), 0);
  EXPECT_EQ(schema.edge_type_id("item:similar:item"), 2);
  EXPECT_EQ(schema.node_type_id("item"), 1);
  try {
    schema.edge_type_id("likes");
    FAIL() << "unknown edge type accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown edge type 'likes'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("user:rates:item"), std::string::npos) << e.what();
  }
  GraphSchema twice = schema;
  twice.edge_types.push_back({"user", "rates", "user"});
  EXPECT_THROW(twice.edge_type_id("rates"), Error);  // ambiguous: two relations named rates
  EXPECT_EQ(twice.edge_type_id("user:rates:user"), 3);
  EXPECT_THROW(schema.node_type_id("movie"), Error);
}

TEST(GraphSchema, BuildingSortsEachColumnByEdgeTypeKeepingInputOrderWithinAType) {
  const TypedExample example = typed_example();
  example.schema.validate(example.graph);
  // Column 3 (an item) has in-edges 2(similar), 0(rates), 1(rates), 4(similar) in input order.
  const int64_t begin = example.graph.indptr[3].item<int64_t>();
  const at::Tensor sources = example.graph.indices.slice(0, begin, begin + 4).to(at::kLong);
  const at::Tensor types = example.graph.type_per_edge.slice(0, begin, begin + 4).to(at::kLong);
  EXPECT_TRUE(sources.equal(at::tensor({0, 1, 2, 4}, at::kLong))) << sources;
  EXPECT_TRUE(types.equal(at::tensor({0, 0, 2, 2}, at::kLong))) << types;
  EXPECT_TRUE(node_types_of(example.graph, at::tensor({0, 1, 2, 4}, at::kLong))
                  .equal(at::tensor({0, 0, 1, 1}, at::kLong)));
}

TEST(GraphSchema, ValidateNamesWrongEndpointsUnsortedColumnsAndBadCounts) {
  TypedExample example = typed_example();
  // An edge typed user:rates:item whose source is an item.
  CscGraph wrong = example.graph;
  wrong.type_per_edge = example.graph.type_per_edge.clone();
  wrong.type_per_edge.fill_(0);
  try {
    example.schema.validate(wrong);
    FAIL() << "wrong endpoint types accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("joins a"), std::string::npos) << e.what();
  }
  CscGraph unsorted = example.graph;
  const int64_t begin = example.graph.indptr[3].item<int64_t>();
  unsorted.type_per_edge = example.graph.type_per_edge.clone();
  unsorted.type_per_edge[begin] = 2;
  unsorted.type_per_edge[begin + 2] = 0;
  EXPECT_THROW(example.schema.validate(unsorted), Error);
  CscGraph counts = example.graph;
  counts.node_type_offset = at::tensor({0, 2, 4}, at::kLong);
  EXPECT_THROW(example.schema.validate(counts), Error);
  CscGraph out_of_range = example.graph;
  out_of_range.type_per_edge = example.graph.type_per_edge.clone();
  out_of_range.type_per_edge[0] = 7;
  EXPECT_THROW(example.schema.validate(out_of_range), Error);
}

}  // namespace
}  // namespace graphloom::graph
