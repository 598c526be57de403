// DistGraph's split by owner and merge in request order, against parts answered from memory
// (FakePart): sampling equals the whole graph's, gathers land in request order with only
// remote rows counted, pushes and sparse updates reach exactly their owners, a part's outage
// is waited out within the grace, and a server of the wrong part is refused.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>

#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/graph/build.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

constexpr int64_t kNodes = 30;
const std::vector<int64_t> kNodeEnds{10, 18, 30};  // three parts of uneven size

// Edges numbered by CSC position, as a partition numbers them (part by part).
graph::CscGraph whole_graph() {
  at::manual_seed(3);
  graph::CscGraph whole = graph::csc_from_coo({.src = at::randint(kNodes, {200}, at::kLong),
                                               .dst = at::randint(kNodes, {200}, at::kLong),
                                               .num_nodes = kNodes});
  whole.edge_ids = at::Tensor();
  return whole;
}

// Part `part` of `whole` as the partition format holds it: its nodes' columns, global sources.
partition::Partition part_of(const graph::CscGraph& whole, int64_t part) {
  partition::Partition p;
  p.part = part;
  p.node_begin = part == 0 ? 0 : kNodeEnds[part - 1];
  p.node_end = kNodeEnds[part];
  const at::Tensor indptr = whole.indptr.slice(0, p.node_begin, p.node_end + 1);
  const int64_t first = indptr[0].item<int64_t>();
  p.graph.num_nodes = p.node_end - p.node_begin;
  p.graph.indptr = indptr - first;
  p.graph.indices = whole.indices.slice(0, first, indptr[-1].item<int64_t>()).to(at::kLong);
  p.features["feat"] = at::arange(p.node_begin * 4, p.node_end * 4, at::kFloat).view({-1, 4});
  return p;
}

// One part's server, in memory: samples and serves its rows, records what it is sent.
class FakePart : public PartClient {
 public:
  FakePart(partition::Partition part, ServerMetadata metadata, int64_t served_part)
      : part_(std::move(part)),
        source_(part_.graph),
        metadata_(std::move(metadata)),
        address_(fmt::format("fake-{}", served_part)) {
    metadata_.part = served_part;
    tables_["feat"] = part_.features.at("feat").clone();
  }
  const std::string& address() const override { return address_; }
  sampling::SampledEdges sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                          const sampling::SampleOptions& options) const override {
    ++calls;
    owned_or_throw(seeds);
    sampling::SampleOptions in_part = options;
    in_part.first_node = part_.node_begin;
    sampling::SampledEdges edges = source_.sample_neighbors(seeds, fanout, in_part);
    const int64_t first_edge =
        part_.part == 0 ? 0 : metadata_.edge_range_ends[static_cast<std::size_t>(part_.part - 1)];
    if (edges.edge_ids.defined()) edges.edge_ids = edges.edge_ids + first_edge;
    return edges;
  }
  void pull_into(const std::string& name, const at::Tensor& ids, const TensorSchema& schema,
                 const RowSink& sink) const override {
    ++calls;
    if (down_for_pulls > 0) {
      --down_for_pulls;
      throw ServerUnavailable(fmt::format("{} is down", address_));
    }
    owned_or_throw(ids);
    const at::Tensor rows = table(name).index_select(0, ids - part_.node_begin).contiguous();
    const int64_t row_bytes = schema.row_bytes();
    // Chunks of two rows, last chunk first: the sink must place rows by their offset.
    for (int64_t first = (ids.numel() - 1) / 2 * 2; first >= 0; first -= 2) {
      const int64_t count = std::min<int64_t>(2, ids.numel() - first);
      sink(first, static_cast<const char*>(rows.data_ptr()) + first * row_bytes, count);
    }
  }
  void push(const std::string& name, const at::Tensor& ids, const at::Tensor& rows) const override {
    ++calls;
    owned_or_throw(ids);
    const std::lock_guard lock(mutex_);
    table(name).index_put_({ids - part_.node_begin}, rows);
  }
  void create_tensor(const std::string& name, const TensorSchema& schema,
                     const TensorInit&) const override {
    std::vector<int64_t> shape{part_.node_end - part_.node_begin};
    shape.insert(shape.end(), schema.row_shape.begin(), schema.row_shape.end());
    const std::lock_guard lock(mutex_);
    tables_.try_emplace(name, at::zeros(shape, schema.dtype));
  }
  void sparse_update(const std::string&, const at::Tensor& ids, const at::Tensor& grads,
                     const SparseOptimizerOptions&) const override {
    owned_or_throw(ids);
    const std::lock_guard lock(mutex_);
    updated_ids = ids.clone();
    updated_grads = grads.clone();
  }
  ServerMetadata metadata() const override { return metadata_; }

  at::Tensor& table(const std::string& name) const { return tables_.at(name); }
  mutable std::atomic<int> calls{0};
  mutable std::atomic<int> down_for_pulls{0};  // pulls still to fail as a dead server's
  mutable at::Tensor updated_ids, updated_grads;

 private:
  void owned_or_throw(const at::Tensor& ids) const {
    ASSERT_TRUE(((ids >= part_.node_begin) & (ids < part_.node_end)).all().item<bool>())
        << address_ << " was sent ids it does not own";
  }

  partition::Partition part_;
  sampling::LocalNeighborSource source_;
  ServerMetadata metadata_;
  std::string address_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, at::Tensor> tables_;
};

struct FakeCluster {
  explicit FakeCluster(std::vector<int64_t> served = {0, 1, 2}) : whole(whole_graph()) {
    ServerMetadata metadata;
    metadata.num_parts = 3;
    metadata.node_range_ends = kNodeEnds;
    for (const int64_t end : kNodeEnds) {
      metadata.edge_range_ends.push_back(whole.indptr[end].item<int64_t>());
    }
    metadata.tensors["feat"] = {at::kFloat, {4}};
    metadata.graph_name = "fake";
    for (int64_t part = 0; part < 3; ++part) {
      parts.push_back(part_of(whole, part));
      auto fake = std::make_unique<FakePart>(parts.back(), metadata, served[part]);
      fakes.push_back(fake.get());
      clients.emplace_back();
      clients.back().push_back(std::move(fake));
    }
  }
  graph::CscGraph whole;
  std::vector<partition::Partition> parts;
  std::vector<FakePart*> fakes;
  std::vector<std::vector<std::unique_ptr<PartClient>>> clients;
};

TEST(DistGraph, SamplesWhatTheWholeGraphWouldWhereverTheSeedsLive) {
  for (const bool with_local_part : {false, true}) {
    FakeCluster cluster;
    const partition::Partition local = cluster.parts[1];
    FakePart* local_server = cluster.fakes[1];
    const DistGraph graph(std::move(cluster.clients), with_local_part ? &local : nullptr);
    const at::Tensor seeds = at::tensor({29, 3, 12, 0, 17, 25, 10, 3, 9}, at::kLong);
    const sampling::SampleOptions options{.random_key = 11};
    const sampling::SampledEdges got = graph.sample_neighbors(seeds, 3, options);
    const sampling::SampledEdges want =
        sampling::LocalNeighborSource(cluster.whole).sample_neighbors(seeds, 3, options);
    EXPECT_TRUE(at::equal(got.indptr, want.indptr)) << with_local_part;
    EXPECT_TRUE(at::equal(got.neighbors, want.neighbors)) << with_local_part;
    EXPECT_TRUE(at::equal(got.edge_ids, want.edge_ids)) << with_local_part;
    EXPECT_EQ(local_server->calls.load() == 0, with_local_part)
        << "the local part is read in place";
  }
}

TEST(DistGraph, GathersRowsInRequestOrderCountingOnlyRemoteBytes) {
  FakeCluster cluster;
  const partition::Partition local = cluster.parts[0];
  FakePart* local_server = cluster.fakes[0];
  const DistGraph graph(std::move(cluster.clients), &local);
  const at::Tensor ids = at::tensor({28, 2, 15, 2, 9, 10, 0, 17, 29}, at::kLong);
  const at::Tensor rows = graph.gather("feat", ids);
  const at::Tensor all = at::arange(kNodes * 4, at::kFloat).view({kNodes, 4});
  EXPECT_TRUE(at::equal(rows, all.index_select(0, ids)));
  EXPECT_EQ(local_server->calls.load(), 0);
  EXPECT_EQ(graph.pulled_bytes(), 5 * 4 * 4);  // the 5 rows of parts 1 and 2
  EXPECT_TRUE(at::equal(graph.gather("feat", at::empty({0}, at::kLong)), at::empty({0, 4})));
}

TEST(DistGraph, PushesAndSparseUpdatesReachOnlyTheirOwners) {
  FakeCluster cluster;
  std::vector<FakePart*> fakes = cluster.fakes;
  DistGraph graph(std::move(cluster.clients));
  const at::Tensor ids = at::tensor({29, 0, 12, 5}, at::kLong);
  graph.push("feat", ids, -at::ones({4, 4}));
  EXPECT_TRUE(at::equal(graph.gather("feat", ids), -at::ones({4, 4})));
  EXPECT_EQ(fakes[0]->table("feat")[1][0].item<float>(), 4.0f);  // node 1: untouched
  graph.create_tensor("emb", {at::kFloat, {2}});
  const at::Tensor grads = at::arange(8, at::kFloat).view({4, 2});
  graph.sparse_update("emb", ids, grads, {});
  EXPECT_TRUE(at::equal(fakes[0]->updated_ids, at::tensor({0, 5}, at::kLong)));
  EXPECT_TRUE(at::equal(fakes[0]->updated_grads, grads.index_select(0, at::tensor({1, 3}))));
  EXPECT_TRUE(at::equal(fakes[1]->updated_ids, at::tensor({12}, at::kLong)));
  EXPECT_TRUE(at::equal(fakes[2]->updated_grads, grads.slice(0, 0, 1)));
  EXPECT_NE(
      testing::error_of([&] { graph.gather("feat", at::tensor({30}, at::kLong)); }).find("30"),
      std::string::npos);
}

// A part whose only server is restarting: the pull waits for it within the outage grace, and
// past the grace fails naming the part and the server's failure.
TEST(DistGraph, WaitsOutAPartOutageWithinTheGraceAndThenFailsNamingThePart) {
  FakeCluster cluster;
  FakePart* restarting = cluster.fakes[2];
  const DistGraph graph(std::move(cluster.clients), nullptr, std::chrono::milliseconds(1500));
  const at::Tensor ids = at::tensor({29, 3}, at::kLong);
  restarting->down_for_pulls = 3;
  EXPECT_TRUE(at::equal(graph.gather("feat", ids).select(1, 0), ids.to(at::kFloat) * 4));
  EXPECT_EQ(restarting->down_for_pulls.load(), 0);
  restarting->down_for_pulls = 1000;
  const auto start = std::chrono::steady_clock::now();
  const std::string message = testing::error_of([&] { graph.gather("feat", ids); });
  const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
  EXPECT_NE(message.find("part 2 has no live server left (of 1), after "), std::string::npos)
      << message;
  EXPECT_NE(message.find("fake-2 is down"), std::string::npos) << message;
  EXPECT_GE(waited.count(), 1.0);
  EXPECT_LT(waited.count(), 10.0);
}

TEST(DistGraph, RefusesAServerOfAnotherPart) {
  FakeCluster cluster({0, 2, 1});
  const std::string message =
      testing::error_of([&] { DistGraph graph(std::move(cluster.clients)); });
  EXPECT_NE(message.find("server fake-2 serves part 2, but was given as a server of part 1"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace graphloom::distributed
