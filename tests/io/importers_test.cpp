// Importers: the shared datasets, OGB raw directories (gzip), and text edge lists.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>

#include "graphloom/base/error.h"
#include "graphloom/io/importers.h"
#include "support/test_support.h"

namespace graphloom::io {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::TempDir;

void write_gz(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  gzFile file = gzopen(path.c_str(), "wb");
  gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
  gzclose(file);
}

TEST(SharedImporter, CoraMatchesItsMetaJson) {
  GL_REQUIRE_SHARED_DATASET(cora, "cora");
  const Dataset dataset = import_shared_dataset(cora);
  EXPECT_EQ(dataset.num_nodes(), 2708);
  EXPECT_EQ(dataset.graph.num_edges(), 10556);
  EXPECT_EQ(dataset.node_features.at("feat").sizes(), at::IntArrayRef({2708, 1433}));
  EXPECT_EQ(dataset.num_classes, 7);
  EXPECT_EQ(dataset.splits.at("train").numel(), 140);
  EXPECT_EQ(dataset.splits.at("valid").numel(), 500);
  EXPECT_EQ(dataset.splits.at("test").numel(), 1000);
  EXPECT_FALSE(dataset.directed);
  // Undirected: in- and out-degrees agree everywhere.
  EXPECT_TRUE(at::equal(dataset.graph.in_degrees(), dataset.graph.out_degrees()));
}

TEST(SharedImporter, LinkPredictionGraphHasNoLabels) {
  GL_REQUIRE_SHARED_DATASET(usair, "lp_usair");
  const Dataset dataset = import_shared_dataset(usair);
  EXPECT_EQ(dataset.num_nodes(), 332);
  // edges.csv (4252 entries) is checked, but message passing gets the training pairs only.
  EXPECT_EQ(dataset.graph.num_edges(), 2 * 1807);
  EXPECT_EQ(dataset.edge_splits.at("test_neg").size(0), 213);
  EXPECT_FALSE(dataset.labels.defined());
  EXPECT_TRUE(dataset.node_features.empty());
}

TEST(SharedImporter, AlternativeSplitsAndHeterogeneousRefusal) {
  GL_REQUIRE_SHARED_DATASET(cornell, "webkb_cornell");
  const Dataset split3 = import_shared_dataset(cornell, 3);
  EXPECT_GT(split3.splits.at("train").numel(), 0);
  EXPECT_NE(error_of([&] { import_shared_dataset(cornell, 99); }).find("split 99 not found"),
            std::string::npos);
  GL_REQUIRE_SHARED_DATASET(movielens, "movielens_small");
  EXPECT_NE(error_of([&] { import_shared_dataset(movielens); }).find("heterogeneous"),
            std::string::npos);
}

TEST(OgbImporter, ReadsRawNodePropertyDirectory) {
  TempDir dir;
  const fs::path raw = dir / "ogbn-tiny" / "raw";
  write_gz(raw / "edge.csv.gz", "0,1\n1,2\n2,0\n3,0\n");
  write_gz(raw / "num-node-list.csv.gz", "4\n");
  write_gz(raw / "num-edge-list.csv.gz", "4\n");
  write_gz(raw / "node-feat.csv.gz", "0.5,1\n1.5,2\n2.5,3\n3.5,4e0\n");
  write_gz(raw / "node-label.csv.gz", "0\n2\n1\n2\n");
  write_gz(dir / "ogbn-tiny" / "split" / "time" / "train.csv.gz", "0\n1\n");
  write_gz(dir / "ogbn-tiny" / "split" / "time" / "valid.csv.gz", "2\n");
  write_gz(dir / "ogbn-tiny" / "split" / "time" / "test.csv.gz", "3\n");
  for (const fs::path& source : {dir / "ogbn-tiny", raw}) {
    const Dataset dataset = import_ogb_node_dataset(source, "");
    EXPECT_EQ(dataset.name, "ogbn-tiny");
    EXPECT_EQ(dataset.num_nodes(), 4);
    EXPECT_EQ(dataset.graph.num_edges(), 4);
    EXPECT_TRUE(at::equal(dataset.node_features.at("feat"),
                          at::tensor({0.5f, 1.f, 1.5f, 2.f, 2.5f, 3.f, 3.5f, 4.f}).view({4, 2})));
    EXPECT_EQ(dataset.num_classes, 3);
    EXPECT_TRUE(at::equal(dataset.splits.at("train"), at::tensor({0, 1}, at::kLong)));
  }
  write_gz(raw / "node-feat.csv.gz", "0.5,1\n1.5,x\n2.5,3\n3.5,4\n");
  const std::string error = error_of([&] { import_ogb_node_dataset(raw, ""); });
  EXPECT_NE(error.find("node-feat.csv.gz' line 2: not a number: 'x'"), std::string::npos) << error;
}

TEST(EdgeListImporter, CommentsHeaderWeightsAndDelimiters) {
  TempDir dir;
  std::ofstream(dir / "g.tsv") << "# a comment\nsrc\tdst\tw\n0\t1\t0.5\n% another\n\n2\t0\t2\n";
  const Dataset dataset = import_edge_list(dir / "g.tsv", {.header = true, .weighted = true});
  EXPECT_EQ(dataset.num_nodes(), 3);
  EXPECT_EQ(dataset.graph.num_edges(), 2);
  EXPECT_TRUE(at::equal(dataset.graph.weights, at::tensor({2.f, 0.5f})));

  std::ofstream(dir / "g.txt") << "0 1\n1   2\n";
  EXPECT_EQ(import_edge_list(dir / "g.txt", {.num_nodes = 10}).num_nodes(), 10);
}

TEST(EdgeListImporter, DelimitersAsUsersWriteThem) {
  EXPECT_EQ(parse_delimiter(""), 0);
  EXPECT_EQ(parse_delimiter("tab"), '\t');
  EXPECT_EQ(parse_delimiter("\\t"), '\t');
  EXPECT_EQ(parse_delimiter("space"), ' ');
  EXPECT_EQ(parse_delimiter(";"), ';');
  const std::string error = error_of([] { parse_delimiter("ab"); });
  EXPECT_EQ(error, "delimiter must be one character, 'tab' or 'space', got 'ab'");
}

TEST(EdgeListImporter, MalformedLineReportsItsNumber) {
  TempDir dir;
  std::ofstream(dir / "bad.csv") << "0,1\n# fine\n1,two\n";
  std::string error = error_of([&] { import_edge_list(dir / "bad.csv", {}); });
  EXPECT_NE(error.find("bad.csv' line 3: expected two non-negative integer node ids"),
            std::string::npos)
      << error;
  std::ofstream(dir / "short.csv") << "0,1\n5\n";
  error = error_of([&] { import_edge_list(dir / "short.csv", {}); });
  EXPECT_NE(error.find("short.csv' line 2: expected 2 fields"), std::string::npos) << error;
  std::ofstream(dir / "few.csv") << "0,1\n1,7\n";
  error = error_of([&] { import_edge_list(dir / "few.csv", {.num_nodes = 5}); });
  EXPECT_NE(error.find("node id 7 is out of range for 5 nodes"), std::string::npos) << error;
  // Raw ids far beyond the edges (found by the edge_list fuzzer, as an allocation of 8 GB): a
  // graph that cannot fit is refused, saying what to do.
  std::ofstream(dir / "sparse.csv") << "0,1\n999999999999,0\n";
  error = error_of([&] { import_edge_list(dir / "sparse.csv", {}); });
  EXPECT_NE(error.find("relabel the node ids to 0..N-1"), std::string::npos) << error;
}

}  // namespace
}  // namespace graphloom::io
