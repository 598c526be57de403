// Partitioning: every edge in exactly one part with the right endpoints after mapping back,
// features and labels round-trip, id maps are permutations, METIS cuts far fewer edges than
// random, and broken partition directories give clear errors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"
#include "graphloom/graph/transforms.h"
#include "graphloom/io/generators.h"
#include "graphloom/partition/assign.h"
#include "graphloom/partition/partition_format.h"
#include "support/test_support.h"

namespace graphloom::partition {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::TempDir;

io::Dataset planted(int64_t nodes = 4000) {
  return io::generate_planted(
      {.num_nodes = nodes, .num_classes = 4, .avg_degree = 10, .feat_dim = 6, .seed = 5});
}

TEST(PartitionBook, OwnerAndLocalIds) {
  const PartitionBook book({3, 3, 10});
  EXPECT_EQ(book.owner_of(0), 0);
  EXPECT_EQ(book.owner_of(3), 2);
  EXPECT_TRUE(at::equal(book.owner_of(at::tensor({0, 2, 3, 9}, at::kLong)),
                        at::tensor({0, 0, 2, 2}, at::kLong)));
  EXPECT_TRUE(
      at::equal(book.to_local(at::tensor({2, 3, 9}, at::kLong)), at::tensor({2, 0, 6}, at::kLong)));
  EXPECT_THROW(book.owner_of(10), Error);
}

TEST(Partition, EdgesFeaturesAndIdMapsRoundTrip) {
  const io::Dataset data = planted();
  TempDir dir;
  for (const std::string method : {"metis", "random"}) {
    const int64_t parts = 3;
    const at::Tensor assignment = method == "metis"
                                      ? assign_metis(data.graph, parts, {.balance_edges = true})
                                      : assign_random(data.num_nodes(), parts, 1);
    const fs::path out = dir / method;
    const PartitionInfo info =
        write_partitions(data, assignment, parts, out, {.method = method, .halo_hops = 1});
    EXPECT_EQ(read_partition_info(out).num_edges, data.graph.num_edges());

    std::vector<Partition> loaded;
    std::vector<at::Tensor> orig_nodes;
    for (int64_t k = 0; k < parts; ++k) {
      loaded.push_back(load_partition(out, k));
      orig_nodes.push_back(loaded.back().orig_node_ids);
    }
    const at::Tensor new_to_old = at::cat(orig_nodes);
    EXPECT_TRUE(
        at::equal(std::get<0>(at::sort(new_to_old)), at::arange(data.num_nodes(), at::kLong)));
    const at::Tensor graph_src = data.graph.indices.to(at::kLong);
    const at::Tensor graph_dst = data.graph.destinations();
    std::vector<at::Tensor> edge_ids;
    int64_t train = 0;
    for (const Partition& p : loaded) {
      const at::Tensor local_dst = p.graph.destinations() + p.node_begin;
      const at::Tensor ids = p.orig_edge_ids;
      // Each edge maps back to the original (src, dst) of its original id.
      EXPECT_TRUE(at::equal(new_to_old.index_select(0, p.graph.indices.to(at::kLong)),
                            graph_src.index_select(0, ids)));
      EXPECT_TRUE(at::equal(new_to_old.index_select(0, local_dst), graph_dst.index_select(0, ids)));
      EXPECT_TRUE(at::equal(p.features.at("feat"),
                            data.node_features.at("feat").index_select(0, p.orig_node_ids)));
      EXPECT_TRUE(at::equal(p.labels, data.labels.index_select(0, p.orig_node_ids)));
      // Halo: in-neighbors owned elsewhere.
      if (p.halo_nodes.numel() > 0) {
        EXPECT_TRUE(((p.halo_nodes < p.node_begin).logical_or(p.halo_nodes >= p.node_end))
                        .all()
                        .item<bool>());
      }
      edge_ids.push_back(ids);
      train += p.splits.at("train").numel();
    }
    const at::Tensor all_ids = std::get<0>(at::sort(at::cat(edge_ids)));
    EXPECT_TRUE(at::equal(all_ids, at::arange(data.graph.num_edges(), at::kLong)))
        << "each edge exactly once";
    EXPECT_EQ(train, data.splits.at("train").numel());
    EXPECT_EQ(edge_cut(data.graph, assignment), info.edge_cut);
    // Whole-graph degrees, in relabelled order.
    const auto [in_degrees, out_degrees] = load_partition_degrees(out, info);
    EXPECT_TRUE(at::equal(in_degrees, data.graph.in_degrees().index_select(0, new_to_old)));
    EXPECT_TRUE(at::equal(out_degrees, data.graph.out_degrees().index_select(0, new_to_old)));
  }
}

TEST(Partition, RowScaledFeaturesAreSplitWithTheirScales) {
  io::Dataset data = planted(300);
  data.node_features["feat"] = (data.node_features.at("feat") * 10).to(at::kChar);
  data.node_feature_scales["feat"] = at::rand({300});
  TempDir dir;
  write_partitions(data, assign_random(300, 2, 3), 2, dir / "p", {.method = "random"});
  EXPECT_EQ(read_partition_info(dir / "p").row_scaled_features.count("feat"), 1u);
  for (int64_t k = 0; k < 2; ++k) {
    const Partition p = load_partition(dir / "p", k);
    EXPECT_EQ(p.features.at("feat").scalar_type(), at::kChar);
    EXPECT_TRUE(at::equal(p.feature_scales.at("feat"),
                          data.node_feature_scales.at("feat").index_select(0, p.orig_node_ids)));
  }
}

// With --out-edges each part lists the out-edges of its nodes exactly as the reverse of the
// joined graph does: destinations, global edge ids (the destination part's numbering), order
// within a node and weights.
// The parts' out-edge lists against the reverse of the joined graph, sliced by part.
void expect_out_edges_of_joined_reverse(const std::vector<Partition>& loaded) {
  const graph::CscGraph reference = graph::reverse(join_partitions(loaded).graph);
  int64_t total = 0;
  for (const Partition& part : loaded) {
    const graph::CscGraph& out = part.out_graph;
    ASSERT_TRUE(out.indptr.defined());
    const at::Tensor ptr = reference.indptr.slice(0, part.node_begin, part.node_end + 1);
    const int64_t first = ptr[0].item<int64_t>();
    const int64_t last = ptr[-1].item<int64_t>();
    EXPECT_TRUE(at::equal(out.indptr, ptr - first));
    EXPECT_TRUE(at::equal(out.indices.to(at::kLong),
                          reference.indices.slice(0, first, last).to(at::kLong)));
    EXPECT_TRUE(at::equal(out.edge_ids, reference.edge_ids_or_positions().slice(0, first, last)));
    if (reference.has_weights()) {
      EXPECT_TRUE(at::equal(out.weights, reference.weights.slice(0, first, last)));
    }
    if (reference.type_per_edge.defined()) {
      EXPECT_TRUE(at::equal(out.type_per_edge.to(at::kLong),
                            reference.type_per_edge.slice(0, first, last).to(at::kLong)));
    }
    total += last - first;
  }
  EXPECT_EQ(total, reference.num_edges());
}

// With --out-edges each part lists the out-edges of its nodes exactly as the reverse of the
// joined graph does: destinations, global edge ids (the destination part's numbering), order
// within a node, weights, and on typed graphs each edge's type (columns grouped by type).
TEST(Partition, OutEdgesAreTheJoinedGraphsReverseSlicedByPart) {
  TempDir dir;
  io::Dataset data = planted(1500);
  data.graph.weights = at::rand({data.graph.num_edges()});
  const int64_t parts = 3;
  const PartitionInfo written = write_partitions(data, assign_random(data.num_nodes(), parts, 4),
                                                 parts, dir / "p", {.out_edges = true});
  const PartitionInfo info = read_partition_info(dir / "p");
  ASSERT_TRUE(info.out_edges);
  EXPECT_EQ(info.out_edges_per_part, written.out_edges_per_part);
  std::vector<Partition> loaded;
  for (int64_t k = 0; k < parts; ++k) loaded.push_back(load_partition(dir / "p", k));
  ASSERT_TRUE(loaded[0].graph.weights.defined());
  expect_out_edges_of_joined_reverse(loaded);

  const io::Dataset typed = io::generate_typed_planted(
      {.num_items = 300, .num_users = 80, .num_classes = 3, .likes_per_user = 5});
  write_partitions(typed, assign_random(typed.num_nodes(), 2, 1), 2, dir / "typed",
                   {.out_edges = true});
  const std::vector<Partition> typed_parts{load_partition(dir / "typed", 0),
                                           load_partition(dir / "typed", 1)};
  ASSERT_TRUE(typed_parts[0].out_graph.type_per_edge.defined());
  expect_out_edges_of_joined_reverse(typed_parts);

  // Without the flag there are none.
  write_partitions(data, assign_random(data.num_nodes(), parts, 4), parts, dir / "in-only", {});
  EXPECT_FALSE(load_partition(dir / "in-only", 0).out_graph.indptr.defined());
}

// A typed graph keeps, per part, one contiguous id range per node type and each edge's type.
TEST(Partition, TypedGraphsKeepPerTypeRangesAndEdgeTypes) {
  TempDir dir;
  const io::Dataset data = io::generate_typed_planted(
      {.num_items = 600, .num_users = 150, .num_classes = 3, .likes_per_user = 6});
  const PartitionInfo written = write_partitions(data, assign_random(data.num_nodes(), 3, 2), 3,
                                                 dir / "p", {.method = "random"});
  const PartitionInfo info = read_partition_info(dir / "p");
  EXPECT_EQ(info.schema.edge_types[2].canonical_name(), "item:related:item");
  ASSERT_EQ(info.node_type_ranges.size(), 3u);
  EXPECT_EQ(info.node_type_ranges, written.node_type_ranges);
  for (int64_t k = 0; k < 3; ++k) {
    const Partition part = load_partition(dir / "p", k);
    const auto& range = info.node_type_ranges[static_cast<std::size_t>(k)];
    for (int64_t t = 0; t < 2; ++t) {
      // Every node of the part's type-t range was a type-t node before relabelling.
      const at::Tensor orig =
          part.orig_node_ids.slice(0, range[t] - part.node_begin, range[t + 1] - part.node_begin);
      EXPECT_TRUE((graph::node_types_of(data.graph, orig) == t).all().item<bool>()) << k << t;
    }
    EXPECT_TRUE(part.graph.type_per_edge.equal(
        data.graph.type_per_edge.index_select(0, part.orig_edge_ids.to(at::kLong))));
    // Columns stay sorted by edge type, as per-type sampling needs.
    const at::Tensor types = part.graph.type_per_edge.to(at::kLong);
    const int64_t* indptr = part.graph.indptr.data_ptr<int64_t>();
    for (int64_t v = 0; v < part.graph.num_nodes; ++v) {
      for (int64_t e = indptr[v] + 1; e < indptr[v + 1]; ++e)
        ASSERT_LE(types[e - 1].item<int64_t>(), types[e].item<int64_t>()) << "column " << v;
    }
  }
  // A broken range list is refused with the file named.
  nlohmann::json meta;
  std::ifstream(dir / "p" / "partition.json") >> meta;
  meta["node_type_ranges"][1][1] = -5;
  std::ofstream(dir / "p" / "partition.json") << meta.dump(1);
  EXPECT_THROW(read_partition_info(dir / "p"), Error);
}

TEST(Partition, MetisCutsFarFewerEdgesThanRandom) {
  // Planted partition: at most half of random's cut (the bound).
  const io::Dataset planted_graph = planted(20000);
  const int64_t metis = edge_cut(planted_graph.graph, assign_metis(planted_graph.graph, 4, {}));
  const int64_t random =
      edge_cut(planted_graph.graph, assign_random(planted_graph.num_nodes(), 4, 0));
  EXPECT_LE(2 * metis, random) << "metis " << metis << " random " << random;
  // R-MAT too, with the default scheme (recursive bisection for 4 parts). K-way reaches only
  // ~0.55x of random's cut there: its skewed core cuts badly under k-way refinement.
  const io::Dataset rmat = io::generate_rmat({.scale = 14, .edge_factor = 16});
  const int64_t metis_rmat = edge_cut(rmat.graph, assign_metis(rmat.graph, 4, {}));
  const int64_t random_rmat = edge_cut(rmat.graph, assign_random(rmat.num_nodes(), 4, 0));
  EXPECT_LE(2 * metis_rmat, random_rmat) << "metis " << metis_rmat << " random " << random_rmat;
  const int64_t kway_rmat =
      edge_cut(rmat.graph, assign_metis(rmat.graph, 4, {.scheme = MetisScheme::kKway}));
  EXPECT_LT(metis_rmat, kway_rmat) << "recursive " << metis_rmat << " k-way " << kway_rmat;
}

TEST(Partition, MetisSchemeAutoTakesRecursiveBisectionUpToEightParts) {
  EXPECT_EQ(resolve_metis_scheme(MetisScheme::kAuto, 2), MetisScheme::kRecursive);
  EXPECT_EQ(resolve_metis_scheme(MetisScheme::kAuto, 8), MetisScheme::kRecursive);
  EXPECT_EQ(resolve_metis_scheme(MetisScheme::kAuto, 9), MetisScheme::kKway);
  EXPECT_EQ(resolve_metis_scheme(MetisScheme::kKway, 2), MetisScheme::kKway);
  EXPECT_EQ(name_of(MetisScheme::kRecursive), "recursive");
  // Both schemes give every node a part in range, with self-loops and repeated edges present.
  const io::Dataset data = planted(3000);
  for (const MetisScheme scheme : {MetisScheme::kRecursive, MetisScheme::kKway}) {
    const at::Tensor parts = assign_metis(graph::add_self_loops(data.graph), 3, {.scheme = scheme});
    EXPECT_EQ(parts.numel(), 3000);
    EXPECT_EQ(parts.min().item<int64_t>(), 0);
    EXPECT_EQ(parts.max().item<int64_t>(), 2);
  }
}

TEST(Partition, StreamingCutLiesBetweenMetisAndRandom) {
  const io::Dataset data = planted(20000);
  const int64_t metis = edge_cut(data.graph, assign_metis(data.graph, 4, {}));
  const int64_t random = edge_cut(data.graph, assign_random(data.num_nodes(), 4, 0));
  for (const StreamAlgorithm algorithm : {StreamAlgorithm::kFennel, StreamAlgorithm::kLdg}) {
    const at::Tensor parts = assign_stream(data.graph, 4, {.algorithm = algorithm, .slack = 0.05});
    const int64_t cut = edge_cut(data.graph, parts);
    EXPECT_LT(cut, random) << name_of(algorithm);
    EXPECT_GE(cut, metis) << name_of(algorithm);
    EXPECT_LE(at::bincount(parts, {}, 4).max().item<int64_t>(), 5250)
        << name_of(algorithm);  // capacity
  }
  EXPECT_THROW(enum_from_name<StreamAlgorithm>("stream_algorithm", "hash"), OptionError);
}

TEST(Partition, BalancesTrainNodesWhenAsked) {
  const io::Dataset data = planted(8000);
  at::Tensor mask = at::zeros({data.num_nodes()}, at::kBool);
  mask.index_fill_(0, data.splits.at("train"), true);
  const at::Tensor parts = assign_metis(data.graph, 4, {.train_mask = mask});
  const at::Tensor per_part = at::bincount(parts.masked_select(mask), {}, 4).to(at::kDouble);
  EXPECT_LT((per_part.max() / per_part.mean()).item<double>(), 1.1);
}

TEST(Partition, CustomSplitNamesSurviveTheRoundTrip) {
  io::Dataset data = planted(300);
  data.splits["holdout"] = at::tensor({1, 5, 299}, at::kLong);
  TempDir dir;
  write_partitions(data, assign_random(300, 2, 0), 2, dir / "p", {.method = "random"});
  int64_t total = 0;
  for (int64_t k = 0; k < 2; ++k)
    total += load_partition(dir / "p", k).splits.at("holdout").numel();
  EXPECT_EQ(total, 3);
}

TEST(Partition, EdgeSplitTimesStayAlignedWithTheirRelabelledPairs) {
  io::Dataset data = planted(300);
  data.edge_splits["train"] = at::tensor({0, 1, 2, 3, 299, 4}, at::kLong).view({3, 2});
  data.edge_split_times["train"] = at::tensor({30, 10, 20}, at::kLong);
  data.edge_splits["test"] = at::tensor({5, 6}, at::kLong).view({1, 2});
  TempDir dir;
  const PartitionInfo info =
      write_partitions(data, assign_random(300, 2, 0), 2, dir / "p", {.method = "random"});
  const PartitionInfo read = read_partition_info(dir / "p");
  EXPECT_EQ(read.edge_split_times, std::vector<std::string>{"train"});
  // The pairs keep their order: row i's time is still times[i].
  EXPECT_TRUE(at::equal(load_partition_edge_split_times(dir / "p", read, "train"),
                        data.edge_split_times.at("train")));
  EXPECT_EQ(load_partition_edge_split(dir / "p", read, "train").size(0), 3);
  EXPECT_FALSE(load_partition_edge_split_times(dir / "p", info, "test").defined());
}

TEST(Partition, OnePartAndTooManyParts) {
  const io::Dataset data = planted(300);
  TempDir dir;
  const at::Tensor one = assign_metis(data.graph, 1, {});
  EXPECT_EQ(one.max().item<int64_t>(), 0);
  const PartitionInfo info = write_partitions(data, one, 1, dir / "p1", {.method = "metis"});
  EXPECT_EQ(info.edge_cut, 0);
  EXPECT_EQ(load_partition(dir / "p1", 0).graph.num_edges(), data.graph.num_edges());
  EXPECT_THROW(assign_metis(data.graph, 301, {}), Error);
  EXPECT_THROW(assign_random(300, 301, 0), Error);
}

TEST(Partition, BrokenDirectoriesGiveClearErrors) {
  const io::Dataset data = planted(500);
  TempDir dir;
  const fs::path out = dir / "p";
  write_partitions(data, assign_random(500, 2, 0), 2, out, {.method = "random"});
  nlohmann::json meta = nlohmann::json::parse(std::ifstream(out / "partition.json"));

  nlohmann::json wrong = meta;
  wrong["num_edges"] = meta["num_edges"].get<int64_t>() + 1;
  std::ofstream(out / "partition.json") << wrong.dump();
  EXPECT_NE(error_of([&] { read_partition_info(out); }).find("but num_edges is"),
            std::string::npos);

  std::ofstream(out / "partition.json") << meta.dump();
  save_npy(out / "part-1" / "indices.npy",
           at::zeros({meta["edges_per_part"][1].get<int64_t>()}, at::kFloat));
  EXPECT_NE(
      error_of([&] { load_partition(out, 1); }).find("indices.npy': expected int32 or int64 ids"),
      std::string::npos);

  fs::remove_all(out / "part-1");
  EXPECT_NE(error_of([&] { read_partition_info(out); }).find("part 1 is missing"),
            std::string::npos);
  std::ofstream(out / "partition.json") << "{ broken";
  EXPECT_NE(error_of([&] { read_partition_info(out); }).find("malformed partition config"),
            std::string::npos);
}

// What partition.json declares about a part's files is checked against their .npy headers.
TEST(Partition, DeclaredShapesDtypesAndCountsMustMatchTheFiles) {
  const io::Dataset data = planted(500);
  TempDir dir;
  const fs::path out = dir / "p";
  write_partitions(data, assign_random(500, 2, 0), 2, out, {.method = "random"});
  const nlohmann::json meta = nlohmann::json::parse(std::ifstream(out / "partition.json"));
  const int64_t dim = meta["node_features"]["feat"]["dim"].get<int64_t>();
  const auto load_with = [&](const auto& edit) {
    nlohmann::json edited = meta;
    edit(edited);
    std::ofstream(out / "partition.json") << edited.dump();
    return error_of([&] { load_partition(out, 0); });
  };
  std::string error =
      load_with([&](nlohmann::json& m) { m["node_features"]["feat"]["dim"] = dim + 7; });
  EXPECT_NE(error.find(fmt::format("feature 'feat' is declared in partition.json as float32 with "
                                   "{} values per row, but the file holds float32 with {}",
                                   dim + 7, dim)),
            std::string::npos)
      << error;
  error = load_with([](nlohmann::json& m) { m["node_features"]["feat"]["dtype"] = "float16"; });
  EXPECT_NE(error.find("declared in partition.json as float16"), std::string::npos) << error;
  error = load_with([](nlohmann::json& m) { m["num_classes"] = 1; });
  EXPECT_NE(error.find("labels must be in [-1, 1) (num_classes in partition.json)"),
            std::string::npos)
      << error;
  error = load_with([](nlohmann::json& m) { m["train_per_part"][0] = 100000; });
  EXPECT_NE(error.find("train_per_part says 100000"), std::string::npos) << error;
  std::ofstream(out / "partition.json") << meta.dump();
  EXPECT_EQ(load_partition(out, 0).features.at("feat").size(1), dim);
}

TEST(Partition, FailedWriteLeavesNothing) {
  const io::Dataset data = planted(500);
  TempDir dir;
  io::Dataset bad = data;
  bad.labels = data.labels.to(at::kShort);  // int16 is not writable as .npy
  EXPECT_THROW(write_partitions(bad, assign_random(500, 2, 0), 2, dir / "p", {.method = "random"}),
               Error);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace graphloom::partition
