// Typed datasets: node_types / edge_types / type_per_edge in the minimal edge-list form, round
// trips, the typed generator, and metadata errors that name what is wrong.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/generators.h"
#include "support/test_support.h"

namespace graphloom::io {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

// Users 0-1, items 2-3: rows (src, dst) with their type: rates (user -> item) and rated_by.
json write_typed(const fs::path& dir) {
  fs::create_directories(dir);
  save_npy(dir / "edges.npy", at::tensor({2, 0, 0, 2, 1, 3, 0, 3, 3, 0}, at::kLong).view({5, 2}));
  save_npy(dir / "types.npy", at::tensor({1, 0, 0, 0, 1}, at::kChar));
  json meta = {{"format", "graphloom-dataset"},
               {"version", 1},
               {"num_nodes", 4},
               {"graph", {{"edges", "edges.npy"}, {"type_per_edge", "types.npy"}}},
               {"node_types", {{{"name", "user"}, {"count", 2}}, {{"name", "item"}, {"count", 2}}}},
               {"edge_types", {{"user", "rates", "item"}, {"item", "rated_by", "user"}}}};
  std::ofstream(dir / "metadata.json") << meta.dump(1);
  return meta;
}

std::string typed_load_error(const fs::path& dir) {
  try {
    load_dataset(dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TypedDataset, LoadsTypesAlignedWithEdgeRowsAndRoundTrips) {
  TempDir dir;
  write_typed(dir / "in");
  const Dataset dataset = load_dataset(dir / "in");
  ASSERT_EQ(dataset.schema.num_edge_types(), 2);
  EXPECT_EQ(dataset.schema.edge_types[1].relation, "rated_by");
  EXPECT_TRUE(dataset.graph.node_type_offset.equal(at::tensor({0, 2, 4}, at::kLong)));
  // Node 0 (a user) has in-edges from item 2 and item 3, both rated_by.
  const at::Tensor types = dataset.graph.type_per_edge.to(at::kLong);
  EXPECT_TRUE(types.slice(0, 0, 2).equal(at::tensor({1, 1}, at::kLong))) << types;
  save_dataset(dataset, dir / "out", false);
  const Dataset copy = load_dataset(dir / "out");
  EXPECT_TRUE(copy.graph.type_per_edge.equal(dataset.graph.type_per_edge));
  EXPECT_TRUE(copy.graph.node_type_offset.equal(dataset.graph.node_type_offset));
  EXPECT_EQ(copy.schema.edge_types[0].canonical_name(), "user:rates:item");
  EXPECT_EQ(copy.schema.node_types, dataset.schema.node_types);
}

TEST(TypedDataset, MetadataErrorsNameTheProblem) {
  TempDir dir;
  json meta = write_typed(dir.path());
  // An edge typed rates (user -> item) whose source is an item.
  save_npy(dir / "types.npy", at::tensor({0, 0, 0, 0, 1}, at::kChar));
  EXPECT_NE(typed_load_error(dir.path()).find("has type user:rates:item but joins a 'item' node"),
            std::string::npos)
      << typed_load_error(dir.path());
  save_npy(dir / "types.npy", at::tensor({1, 0, 0, 0}, at::kChar));
  EXPECT_NE(
      typed_load_error(dir.path()).find("edge types: expected 5 values (one per edge), got 4"),
      std::string::npos)
      << typed_load_error(dir.path());
  write_typed(dir.path());
  meta["node_types"][1]["count"] = 3;
  std::ofstream(dir / "metadata.json") << meta.dump(1);
  EXPECT_NE(typed_load_error(dir.path()).find("add up to num_nodes"), std::string::npos)
      << typed_load_error(dir.path());
  meta = write_typed(dir.path());
  meta["edge_types"][0] = {"user", "rates"};
  std::ofstream(dir / "metadata.json") << meta.dump(1);
  EXPECT_NE(typed_load_error(dir.path()).find("[src_type, relation, dst_type]"), std::string::npos);
  meta = write_typed(dir.path());
  meta["edge_types"][0] = {"user", "rates", "movie"};
  std::ofstream(dir / "metadata.json") << meta.dump(1);
  EXPECT_NE(typed_load_error(dir.path()).find("unknown node type 'movie'"), std::string::npos)
      << typed_load_error(dir.path());
  meta = write_typed(dir.path());
  meta.erase("edge_types");
  std::ofstream(dir / "metadata.json") << meta.dump(1);
  EXPECT_NE(typed_load_error(dir.path()).find("node_types, edge_types and graph.type_per_edge"),
            std::string::npos);
}

TEST(TypedPlanted, UsersLikeTheirPreferredClassAndRelatedEdgesAreNoise) {
  const Dataset dataset = generate_typed_planted(
      {.num_items = 2000, .num_users = 500, .num_classes = 4, .likes_per_user = 10});
  dataset.schema.validate(dataset.graph);
  EXPECT_EQ(dataset.graph.num_edges(), 2 * 500 * 10 + 2 * 2000 * 5);
  EXPECT_EQ(dataset.labels.slice(0, 2000).max().item<int64_t>(), -1);  // users unlabelled
  EXPECT_LT(dataset.splits.at("test").max().item<int64_t>(), 2000);
  // Same-class share among items two "likes" hops apart vs. among related items.
  const at::Tensor dst = dataset.graph.destinations();
  const at::Tensor src = dataset.graph.indices.to(at::kLong);
  const at::Tensor types = dataset.graph.type_per_edge.to(at::kLong);
  const at::Tensor related = types == 2;
  const at::Tensor labels = dataset.labels;
  const double related_same =
      (labels.index({src.index({related})}) == labels.index({dst.index({related})}))
          .to(at::kDouble)
          .mean()
          .item<double>();
  EXPECT_LT(related_same, 0.35);  // uniform: about 1/4
  // Users' likes: the most common class among a user's items holds about 80% + 20%/4.
  const at::Tensor likes = types == 0;
  const at::Tensor by_user =
      std::get<1>(at::sort(src.index({likes}), c10::optional<bool>(true), 0));
  const at::Tensor liked =
      labels.index({dst.index({likes}).index_select(0, by_user)}).view({500, 10});
  const at::Tensor top = std::get<0>(at::mode(liked, 1));
  const double agree = (liked == top.unsqueeze(1)).to(at::kDouble).mean().item<double>();
  EXPECT_GT(agree, 0.7);
}

}  // namespace
}  // namespace graphloom::io
