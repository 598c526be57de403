// The dataset directory format: the minimal form other tools write, round trips, and every
// kind of bad input giving an error that names the file.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/dataset_report.h"
#include "support/test_support.h"

namespace graphloom::io {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

// The minimal form of DESIGN.md section 4, exactly as ../shared/bench/make_bench_graph.py
// writes it: edges [E, 2], features, labels, splits.
json write_minimal(const fs::path& dir) {
  fs::create_directories(dir);
  save_npy(dir / "edges.npy", at::tensor({0, 1, 1, 2, 2, 0, 3, 2, 2, 3}, at::kLong).view({5, 2}));
  save_npy(dir / "feat.npy", at::arange(8, at::kFloat).view({4, 2}));
  save_npy(dir / "labels.npy", at::tensor({0, 1, -1, 1}, at::kLong));
  save_npy(dir / "train_idx.npy", at::tensor({0, 1}, at::kLong));
  save_npy(dir / "valid_idx.npy", at::tensor({3}, at::kLong));
  save_npy(dir / "test_idx.npy", at::tensor({2}, at::kLong));
  json meta = {
      {"format", "graphloom-dataset"},
      {"version", 1},
      {"name", "tiny"},
      {"num_nodes", 4},
      {"directed", true},
      {"graph", {{"edges", "edges.npy"}}},
      {"node_features", {{"feat", "feat.npy"}}},
      {"labels", "labels.npy"},
      {"num_classes", 2},
      {"splits",
       {{"train", "train_idx.npy"}, {"valid", "valid_idx.npy"}, {"test", "test_idx.npy"}}}};
  std::ofstream(dir / "metadata.json") << meta.dump(1);
  return meta;
}

void rewrite_metadata(const fs::path& dir, const json& meta) {
  std::ofstream(dir / "metadata.json") << meta.dump(1);
}

std::string load_error(const fs::path& dir, LoadOptions options = {}) {
  try {
    load_dataset(dir, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Dataset, LoadsTheMinimalForm) {
  TempDir dir;
  write_minimal(dir.path());
  const Dataset dataset = load_dataset(dir.path());
  EXPECT_EQ(dataset.name, "tiny");
  EXPECT_EQ(dataset.num_nodes(), 4);
  EXPECT_EQ(dataset.graph.num_edges(), 5);
  EXPECT_TRUE(at::equal(dataset.graph.indptr, at::tensor({0, 1, 2, 4, 5}, at::kLong)));
  EXPECT_TRUE(at::equal(dataset.graph.indices, at::tensor({2, 0, 1, 3, 2}, at::kInt)));
  EXPECT_EQ(dataset.node_features.at("feat").sizes(), at::IntArrayRef({4, 2}));
  EXPECT_EQ(dataset.num_classes, 2);
  EXPECT_EQ(dataset.splits.at("train").numel(), 2);
  EXPECT_FALSE(dataset.graph.has_edge_ids());
  const Dataset with_ids = load_dataset(dir.path(), {.keep_edge_ids = true});
  EXPECT_TRUE(at::equal(with_ids.graph.edge_ids, at::tensor({2, 0, 1, 3, 4}, at::kLong)));
}

TEST(Dataset, ReportCountsWhatTheDatasetHolds) {
  TempDir dir;
  write_minimal(dir.path());
  const json report = dataset_report(load_dataset(dir.path()));
  EXPECT_EQ(report["num_nodes"], 4);
  EXPECT_EQ(report["num_edges"], 5);
  // In-degrees of the minimal form are 1, 1, 2, 1.
  EXPECT_EQ(report["in_degree"]["max"], 2);
  EXPECT_EQ(report["in_degree"]["zero"], 0);
  EXPECT_EQ(report["label_histogram"], json::array({1, 2}));
  EXPECT_EQ(report["unlabeled"], 1);
  EXPECT_EQ(report["node_features"]["feat"]["shape"], json::array({4, 2}));
  EXPECT_EQ(report["splits"]["train"], 2);
  EXPECT_FALSE(report.contains("node_types"));
}

TEST(Dataset, SaveThenLoadRoundTrips) {
  TempDir dir;
  write_minimal(dir / "in");
  const Dataset original = load_dataset(dir / "in", {.keep_edge_ids = true});
  save_dataset(original, dir / "out", /*overwrite=*/false);
  const Dataset copy = load_dataset(dir / "out");
  EXPECT_TRUE(at::equal(copy.graph.indptr, original.graph.indptr));
  EXPECT_TRUE(at::equal(copy.graph.indices, original.graph.indices));
  EXPECT_TRUE(at::equal(copy.graph.edge_ids, original.graph.edge_ids));
  EXPECT_TRUE(at::equal(copy.node_features.at("feat"), original.node_features.at("feat")));
  EXPECT_TRUE(at::equal(copy.labels, original.labels));
  EXPECT_TRUE(at::equal(copy.splits.at("test"), original.splits.at("test")));
}

TEST(Dataset, EdgeSplitTimesRoundTripAndMustMatchTheirSplit) {
  TempDir dir;
  write_minimal(dir / "in");
  Dataset dataset = load_dataset(dir / "in");
  dataset.edge_splits["train"] = at::tensor({0, 1, 1, 2}, at::kLong).view({2, 2});
  dataset.edge_split_times["train"] = at::tensor({5, 7}, at::kLong);
  save_dataset(dataset, dir / "out", false);
  const Dataset copy = load_dataset(dir / "out");
  EXPECT_TRUE(at::equal(copy.edge_split_times.at("train"), dataset.edge_split_times.at("train")));
  dataset.edge_split_times["train"] = at::tensor({5, 7, 9}, at::kLong);
  EXPECT_NE(testing::error_of([&] {
              validate_dataset(dataset);
            }).find("times of edge split 'train' must be int64 [2]"),
            std::string::npos);
  dataset.edge_split_times = {{"valid", at::tensor({1}, at::kLong)}};
  EXPECT_NE(testing::error_of([&] {
              validate_dataset(dataset);
            }).find("edge split times given for missing split 'valid'"),
            std::string::npos);
}

TEST(Dataset, TimestampsFollowTheEdgesAndRoundTrip) {
  TempDir dir;
  json meta = write_minimal(dir / "in");
  // Edge i of edges.npy at time 10 * i; nodes at 100 + node id.
  save_npy(dir / "in" / "edge_timestamp.npy", at::arange(0, 50, 10, at::kLong));
  save_npy(dir / "in" / "node_timestamp.npy", at::arange(100, 104, at::kInt));
  meta["graph"]["edge_timestamp"] = "edge_timestamp.npy";
  meta["node_timestamp"] = "node_timestamp.npy";
  rewrite_metadata(dir / "in", meta);
  const Dataset dataset = load_dataset(dir / "in", {.strict = true, .keep_edge_ids = true});
  EXPECT_TRUE(at::equal(dataset.graph.edge_time, dataset.graph.edge_ids * 10));
  EXPECT_TRUE(at::equal(dataset.node_timestamp, at::arange(100, 104, at::kLong)));
  save_dataset(dataset, dir / "out", /*overwrite=*/false);
  const Dataset copy = load_dataset(dir / "out", {.strict = true});
  EXPECT_TRUE(at::equal(copy.graph.edge_time, dataset.graph.edge_time));
  EXPECT_TRUE(at::equal(copy.node_timestamp, dataset.node_timestamp));

  save_npy(dir / "in" / "node_timestamp.npy", at::zeros({3}, at::kLong));
  EXPECT_NE(load_error(dir / "in").find("node_timestamp must be int64 with one time per node (4)"),
            std::string::npos);
  save_npy(dir / "in" / "node_timestamp.npy", at::zeros({4}, at::kFloat));
  EXPECT_NE(load_error(dir / "in").find("node_timestamp must be a 1-D int64"), std::string::npos);
}

TEST(Dataset, FeaturesInMemoryAreReadOntoHugePages) {
  TempDir dir;
  write_minimal(dir / "in");
  Dataset dataset = load_dataset(dir / "in", {.memory_map = false});
  // 4 MB of rows (4 nodes x 262,144 floats): big enough for its own huge-page mapping.
  dataset.node_features["feat"] = at::randn({4, 1 << 18});
  save_dataset(dataset, dir / "out", false);
  const Dataset mapped = load_dataset(dir / "out");
  const Dataset read = load_dataset(dir / "out", {.tables_in_memory = true});
  EXPECT_TRUE(at::equal(read.node_features.at("feat"), dataset.node_features.at("feat")));
  EXPECT_TRUE(at::equal(mapped.node_features.at("feat"), dataset.node_features.at("feat")));
  // The mapped table starts right after the file's .npy header; the one read into memory
  // starts a 2 MB-aligned mapping of its own.
  const auto address = [](const at::Tensor& t) {
    return reinterpret_cast<uintptr_t>(t.data_ptr());
  };
  EXPECT_EQ(address(read.node_features.at("feat")) % (2 << 20), 0u);
  EXPECT_NE(address(mapped.node_features.at("feat")) % 4096, 0u);
}

TEST(Dataset, EncodedFeaturesRoundTripWithTheirRowScales) {
  TempDir dir;
  write_minimal(dir / "in");
  Dataset dataset = load_dataset(dir / "in", {.memory_map = false});
  dataset.node_features["half"] = at::randn({4, 3}).to(at::kBFloat16);
  dataset.node_features["feat"] = at::tensor({1, -2, 127, 0, 5, 9, 3, 3}, at::kChar).view({4, 2});
  dataset.node_feature_scales["feat"] = at::tensor({0.5f, 1.0f, 2.0f, 0.25f});
  save_dataset(dataset, dir / "out", false);
  const Dataset copy = load_dataset(dir / "out");
  EXPECT_EQ(copy.node_features.at("half").scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(copy.node_features.at("half"), dataset.node_features.at("half")));
  EXPECT_TRUE(at::equal(copy.node_features.at("feat"), dataset.node_features.at("feat")));
  EXPECT_TRUE(
      at::equal(copy.node_feature_scales.at("feat"), dataset.node_feature_scales.at("feat")));
  EXPECT_EQ(copy.node_feature_scales.count("half"), 0u);
  // int8 without its scale is not a feature.
  dataset.node_feature_scales.clear();
  EXPECT_THROW(save_dataset(dataset, dir / "bad", false), Error);
}

TEST(Dataset, RefusesExistingOutputUnlessForced) {
  TempDir dir;
  write_minimal(dir / "in");
  const Dataset dataset = load_dataset(dir / "in");
  fs::create_directories(dir / "out");
  EXPECT_THROW(save_dataset(dataset, dir / "out", false), UsageError);
  EXPECT_NO_THROW(save_dataset(dataset, dir / "out", true));
  EXPECT_TRUE(fs::exists(dir / "out" / "metadata.json"));
}

TEST(Dataset, FailedWriteLeavesNoPartialDirectory) {
  TempDir dir;
  write_minimal(dir / "in");
  Dataset dataset = load_dataset(dir / "in");
  // int16 labels cannot be written to .npy: the save fails after the graph files.
  dataset.labels = at::zeros({4}, at::kShort);
  dataset.num_classes = 2;
  EXPECT_THROW(save_dataset(dataset, dir / "out", false), Error);
  EXPECT_FALSE(fs::exists(dir / "out"));
  int leftovers = 0;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    leftovers += entry.path() != dir / "in";
  EXPECT_EQ(leftovers, 0);
}

TEST(DatasetErrors, TruncatedArrayNamesTheFile) {
  TempDir dir;
  write_minimal(dir.path());
  fs::resize_file(dir / "feat.npy", fs::file_size(dir / "feat.npy") - 4);
  const std::string error = load_error(dir.path());
  EXPECT_NE(error.find("feat.npy"), std::string::npos) << error;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
}

TEST(DatasetErrors, WrongDtypes) {
  TempDir dir;
  write_minimal(dir.path());
  save_npy(dir / "labels.npy", at::zeros({4}, at::kFloat));
  std::string error = load_error(dir.path());
  EXPECT_NE(error.find("labels.npy': labels must be int64"), std::string::npos) << error;

  write_minimal(dir.path());
  save_npy(dir / "edges.npy", at::zeros({5, 2}, at::kFloat));
  error = load_error(dir.path());
  EXPECT_NE(error.find("edges must be int32 or int64, got float32"), std::string::npos) << error;
}

TEST(DatasetErrors, LabelsLengthMustMatchNodes) {
  TempDir dir;
  write_minimal(dir.path());
  save_npy(dir / "labels.npy", at::zeros({3}, at::kLong));
  const std::string error = load_error(dir.path());
  EXPECT_NE(error.find("labels must have one value per node (4), got 3"), std::string::npos)
      << error;
}

TEST(DatasetErrors, EdgeEndpointsOutOfRange) {
  TempDir dir;
  write_minimal(dir.path());
  save_npy(dir / "edges.npy", at::tensor({0, 1, 1, 4}, at::kLong).view({2, 2}));
  std::string error = load_error(dir.path());
  EXPECT_NE(error.find("edges.npy': edge 1 (1 -> 4) has an endpoint outside [0, 4)"),
            std::string::npos)
      << error;
  save_npy(dir / "edges.npy", at::tensor({0, 1, -1, 2}, at::kInt).view({2, 2}));
  error = load_error(dir.path());
  EXPECT_NE(error.find("edge 1 (-1 -> 2)"), std::string::npos) << error;
}

TEST(DatasetErrors, MissingFileNamedInMetadata) {
  TempDir dir;
  write_minimal(dir.path());
  fs::remove(dir / "valid_idx.npy");
  const std::string error = load_error(dir.path());
  EXPECT_NE(error.find("valid_idx.npy' named by 'valid' does not exist"), std::string::npos)
      << error;
}

TEST(DatasetErrors, SplitIdsOutOfRange) {
  TempDir dir;
  write_minimal(dir.path());
  save_npy(dir / "test_idx.npy", at::tensor({7}, at::kLong));
  EXPECT_NE(load_error(dir.path()).find("node ids must be in [0, 4), found 7"), std::string::npos);
}

TEST(DatasetErrors, FeatureRowsMustMatchNodes) {
  TempDir dir;
  write_minimal(dir.path());
  save_npy(dir / "feat.npy", at::zeros({5, 2}, at::kFloat));
  EXPECT_NE(
      load_error(dir.path())
          .find("node feature 'feat' must be a float (or int8 with a row scale) array with 4 rows"),
      std::string::npos);
}

TEST(DatasetErrors, MetadataProblems) {
  TempDir dir;
  json meta = write_minimal(dir.path());
  meta["version"] = 2;
  rewrite_metadata(dir.path(), meta);
  EXPECT_NE(load_error(dir.path()).find("unsupported version 2"), std::string::npos);

  meta["version"] = 1;
  meta["surprise"] = true;
  rewrite_metadata(dir.path(), meta);
  EXPECT_EQ(load_error(dir.path()), "");  // unknown keys are fine...
  EXPECT_NE(load_error(dir.path(), {.strict = true}).find("unknown key 'surprise'"),
            std::string::npos);  // ...except under --strict

  // Found by the dataset_metadata fuzzer: a value of the wrong JSON type escaped as
  // nlohmann's exception rather than an error naming the file.
  meta["name"] = json::object({{"feat", "feat.npy"}});
  rewrite_metadata(dir.path(), meta);
  EXPECT_NE(load_error(dir.path()).find("metadata.json': [json.exception.type_error.302]"),
            std::string::npos)
      << load_error(dir.path());

  std::ofstream(dir / "metadata.json") << "{ not json";
  EXPECT_NE(load_error(dir.path()).find("invalid JSON"), std::string::npos);
  EXPECT_NE(load_error(dir / "nowhere").find("does not exist"), std::string::npos);
}

}  // namespace
}  // namespace graphloom::io
