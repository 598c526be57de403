// Graph servers in their roles: main and backup servers sharing a part in shared memory (Cora,
// out-edges and weighted sampling's alias tables), encoded rows over RPC with a feature cache, TLS,
// and the token requirement.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include <ATen/ATen.h>

#include "distributed/rpc/same_edges.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/graph/feature_cache.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/row_codec.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/io/generators.h"
#include "graphloom/io/importers.h"
#include "graphloom/partition/assign.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

using testing::error_of;

// Two "machines" on loopback: for each of the 2 parts a main server publishing it in shared
// memory and a backup server mapping it.
struct MainAndBackupServers {
  // `on_disk`: the servers read "feat" from the parts' files, through `disk_cache`.
  MainAndBackupServers(const std::filesystem::path& parts, const std::string& cluster,
                       bool on_disk = false,
                       features::CacheOptions disk_cache = {
                           .policy = features::CachePolicy::kNone}) {
    for (int64_t part = 0; part < 2; ++part) {
      for (const ServerRole role : {ServerRole::kMain, ServerRole::kBackup}) {
        servers.push_back(
            std::make_unique<GraphServer>(ServerOptions{.partition_dir = parts,
                                                        .part = part,
                                                        .token = testing::kClusterToken,
                                                        .role = role,
                                                        .cluster_id = cluster,
                                                        .attach_timeout = std::chrono::seconds(10),
                                                        .features_on_disk = on_disk,
                                                        .disk_cache = disk_cache}));
        addresses[part].push_back(servers.back()->address());
      }
    }
  }
  std::vector<std::unique_ptr<GraphServer>> servers;
  std::vector<std::vector<std::string>> addresses = std::vector<std::vector<std::string>>(2);
};

// Cora in 2 METIS parts, each part served by a main and a backup server sharing its memory (two
// "machines" on loopback): requests rotate over both servers of a part and agree with Cora.
TEST(GraphServiceCora, MainAndBackupPerPartServeCora) {
  GL_REQUIRE_SHARED_DATASET(cora_dir, "cora");
  testing::TempDir dir;
  const io::Dataset cora = io::import_shared_dataset(cora_dir);
  partition::write_partitions(cora, partition::assign_metis(cora.graph, 2, {}), 2,
                              dir.path() / "parts", {.method = "metis"});
  const std::string cluster = fmt::format("test{}-cora", ::getpid());
  const MainAndBackupServers cluster_servers(dir.path() / "parts", cluster);
  const auto& addresses = cluster_servers.addresses;
  const DistGraph graph(addresses, {.token = testing::kClusterToken});
  std::vector<partition::Partition> parts;
  for (int64_t part = 0; part < 2; ++part) {
    parts.push_back(partition::load_partition(dir.path() / "parts", part));
  }
  const partition::Partition whole = partition::join_partitions(parts);
  EXPECT_EQ(graph.num_nodes(), 2708);
  const sampling::LocalNeighborSource local(whole.graph);
  const at::Tensor seeds = at::arange(2708, at::kLong);
  for (int repeat = 0; repeat < 2; ++repeat) {  // both servers of each part answer
    expect_same_edges(graph.sample_neighbors(seeds, 4, {.random_key = 9}),
                      local.sample_neighbors(seeds, 4, {.random_key = 9}));
    EXPECT_TRUE(at::equal(graph.gather("feat", seeds), whole.features.at("feat")));
    EXPECT_TRUE(at::equal(graph.gather("label", seeds), whole.labels));
  }
  // A push through one server is seen through the other (one shared copy per part).
  const at::Tensor ids = at::tensor({3, 2000}, at::kLong);
  const at::Tensor rows = at::ones({2, whole.features.at("feat").size(1)});
  graph.push("feat", ids, rows);
  EXPECT_TRUE(at::equal(graph.gather("feat", ids), rows));
  EXPECT_TRUE(at::equal(graph.gather("feat", ids), rows));
  // A trainer of machine 0 maps part 0 from shared memory (no copy, no RPC for it) and sees
  // the push made through the servers.
  const auto mapped = SharedPartition::attach(cluster, 0, std::chrono::seconds(5));
  const DistGraph trainer_view(addresses, {.token = testing::kClusterToken}, &mapped->part());
  expect_same_edges(trainer_view.sample_neighbors(seeds, 4, {.random_key = 9}),
                    local.sample_neighbors(seeds, 4, {.random_key = 9}));
  EXPECT_TRUE(at::equal(trainer_view.gather("feat", ids), rows));
  // A tensor created through the main servers is found by the backups in shared memory.
  DistGraph mutable_graph(addresses, {.token = testing::kClusterToken});
  const DistTensor output(mutable_graph, "output", {at::kFloat, {2}});
  output.push(seeds, at::arange(2708 * 2, at::kFloat).reshape({2708, 2}));
  for (int repeat = 0; repeat < 2; ++repeat) {
    EXPECT_TRUE(at::equal(output.pull(seeds), at::arange(2708 * 2, at::kFloat).reshape({2708, 2})));
  }
}

// Out-edges are published in shared memory with the rest of a part: backups and a trainer's
// mapped part sample them too. A partition without them is refused clearly, and the server
// keeps serving.
TEST(GraphServiceOutEdges, SharedMemoryCarriesOutEdgesAndPartsWithoutThemRefuse) {
  testing::TempDir dir;
  const io::Dataset data = io::generate_planted(
      {.num_nodes = 800, .num_classes = 3, .avg_degree = 5, .feat_dim = 4, .seed = 2});
  const at::Tensor assignment = partition::assign_random(data.num_nodes(), 2, 5);
  partition::write_partitions(data, assignment, 2, dir.path() / "with", {.out_edges = true});
  partition::write_partitions(data, assignment, 2, dir.path() / "without", {});
  const std::string cluster = fmt::format("test{}-out", ::getpid());
  const MainAndBackupServers cluster_servers(dir.path() / "with", cluster);
  const auto& addresses = cluster_servers.addresses;
  const partition::Partition whole =
      partition::join_partitions({partition::load_partition(dir.path() / "with", 0),
                                  partition::load_partition(dir.path() / "with", 1)});
  const sampling::LocalNeighborSource local(whole.graph);
  const at::Tensor seeds = at::arange(800, at::kLong);
  const sampling::SampleOptions out{.direction = sampling::EdgeDirection::kOut, .random_key = 4};
  const auto mapped = SharedPartition::attach(cluster, 1, std::chrono::seconds(5));
  const DistGraph trainer_view(addresses, {.token = testing::kClusterToken}, &mapped->part());
  for (int repeat = 0; repeat < 2; ++repeat) {  // both servers of each part answer
    expect_same_edges(trainer_view.sample_neighbors(seeds, 3, out),
                      local.sample_neighbors(seeds, 3, out));
  }

  const GraphServer in_only(
      {.partition_dir = dir.path() / "without", .part = 0, .token = testing::kClusterToken});
  const GraphClient client(in_only.address(), {.token = testing::kClusterToken});
  const at::Tensor owned = at::arange(10, at::kLong);
  EXPECT_NE(error_of([&] { client.sample_neighbors(owned, 3, out); }).find("--out-edges"),
            std::string::npos);
  EXPECT_EQ(client.sample_neighbors(owned, 3, {}).indptr.numel(), 11);
}

// Weighted sampling reads alias tables that the main server builds at load and the backup maps
// from shared memory: both answer, in and out, exactly as the whole graph samples.
TEST(GraphServiceWeighted, MainAndBackupSampleByTheSharedAliasTables) {
  for (const bool all_positive : {false, true}) {  // the mark travels in the manifest
    SCOPED_TRACE(all_positive);
    testing::TempDir dir;
    io::Dataset data = io::generate_planted(
        {.num_nodes = 600, .num_classes = 3, .avg_degree = 6, .feat_dim = 4, .seed = 3});
    at::manual_seed(3);
    const at::Tensor noise = at::rand({data.graph.num_edges()});
    data.graph.weights =
        all_positive ? noise + 0.01 : noise * (at::rand({data.graph.num_edges()}) > 0.2);
    const at::Tensor assignment = partition::assign_random(data.num_nodes(), 2, 5);
    partition::write_partitions(data, assignment, 2, dir.path() / "parts", {.out_edges = true});
    const std::string cluster = fmt::format("test{}-weighted{}", ::getpid(), all_positive);
    const MainAndBackupServers cluster_servers(dir.path() / "parts", cluster);
    const auto mapped = SharedPartition::attach(cluster, 0, std::chrono::seconds(5));
    EXPECT_EQ(mapped->part().graph.weight_alias_all_positive, all_positive);
    EXPECT_EQ(mapped->part().out_graph.weight_alias_all_positive, all_positive);
    const partition::Partition whole =
        partition::join_partitions({partition::load_partition(dir.path() / "parts", 0),
                                    partition::load_partition(dir.path() / "parts", 1)});
    const sampling::LocalNeighborSource local(whole.graph);
    const DistGraph trainer_view(cluster_servers.addresses, {.token = testing::kClusterToken});
    const at::Tensor seeds = at::arange(600, at::kLong);
    for (const auto direction : {sampling::EdgeDirection::kIn, sampling::EdgeDirection::kOut}) {
      for (const bool replace : {false, true}) {
        const sampling::SampleOptions options{
            .replace = replace, .weighted = true, .direction = direction, .random_key = 8};
        for (int repeat = 0; repeat < 2; ++repeat) {  // both servers of each part answer
          expect_same_edges(trainer_view.sample_neighbors(seeds, 3, options),
                            local.sample_neighbors(seeds, 3, options));
        }
      }
    }
  }
}

// Temporal sampling through the servers: parts written with their columns sorted by time,
// shared with the backups, sampled at each seed's time exactly as the joined graph is.
TEST(GraphServiceTemporal, MainAndBackupSampleEachSeedsPastAsTheWholeGraphDoes) {
  testing::TempDir dir;
  io::Dataset data = io::generate_planted(
      {.num_nodes = 600, .num_classes = 3, .avg_degree = 8, .feat_dim = 4, .seed = 4});
  at::manual_seed(4);
  data.node_timestamp = at::randint(1000, {600}, at::kLong);
  data.graph.edge_time = at::randint(1000, {data.graph.num_edges()}, at::kLong);
  const at::Tensor assignment = partition::assign_random(data.num_nodes(), 2, 5);
  partition::write_partitions(data, assignment, 2, dir.path() / "parts", {});
  const std::string cluster = fmt::format("test{}-temporal", ::getpid());
  const MainAndBackupServers cluster_servers(dir.path() / "parts", cluster);
  const partition::Partition whole =
      partition::join_partitions({partition::load_partition(dir.path() / "parts", 0),
                                  partition::load_partition(dir.path() / "parts", 1)});
  ASSERT_TRUE(whole.graph.edge_time.defined());
  const sampling::LocalNeighborSource local(whole.graph);
  const DistGraph trainer_view(cluster_servers.addresses, {.token = testing::kClusterToken});
  const at::Tensor seeds = at::randperm(600, at::kLong);
  const at::Tensor seed_times = at::randint(100, 1000, {600}, at::kLong);
  for (const auto strategy :
       {sampling::TemporalStrategy::kUniform, sampling::TemporalStrategy::kLast}) {
    const sampling::SampleOptions options{
        .random_key = 8, .seed_times = seed_times, .temporal_strategy = strategy};
    for (int repeat = 0; repeat < 2; ++repeat) {  // both servers of each part answer
      const sampling::SampledEdges got = trainer_view.sample_neighbors(seeds, 3, options);
      expect_same_edges(got, local.sample_neighbors(seeds, 3, options));
      // No pick is later than its seed: the joined graph's times, by relabelled edge id.
      const at::Tensor per_pick =
          at::repeat_interleave(seed_times, got.indptr.slice(0, 1) - got.indptr.slice(0, 0, -1));
      EXPECT_TRUE(
          (whole.graph.edge_time.index_select(0, got.edge_ids) <= per_pick).all().item<bool>());
    }
  }
  // The seeds' own times are pulled like labels, in relabelled ids.
  at::Tensor times = at::empty({600}, at::kLong);
  trainer_view.gather("node_timestamp", seeds, times);
  EXPECT_TRUE(at::equal(times, whole.node_timestamp.index_select(0, seeds)));
  const at::Tensor original =
      at::cat({partition::load_partition(dir.path() / "parts", 0).orig_node_ids,
               partition::load_partition(dir.path() / "parts", 1).orig_node_ids});
  EXPECT_TRUE(at::equal(whole.node_timestamp, data.node_timestamp.index_select(0, original)));
  // A count of times that does not match the seeds is refused.
  sampling::SampleOptions short_times{.random_key = 8, .seed_times = seed_times.slice(0, 0, 10)};
  EXPECT_THROW(trainer_view.sample_neighbors(seeds, 3, short_times), Error);
}

// A planted graph of 2000 nodes with 16 float32 features, in 2 random parts at `out`; with
// `int8`, its features stored as int8 with row scales.
io::Dataset planted_in_two_parts(const std::filesystem::path& out, bool int8) {
  io::Dataset data = io::generate_planted(
      {.num_nodes = 2000, .num_classes = 4, .avg_degree = 8, .feat_dim = 16, .seed = 3});
  if (int8) {
    const features::EncodedRows encoded =
        features::encode_rows(data.node_features.at("feat"), at::kChar);
    data.node_features["feat"] = encoded.values;
    data.node_feature_scales["feat"] = encoded.row_scale;
  }
  partition::write_partitions(data, partition::assign_random(2000, 2, 1), 2, out,
                              {.method = "random"});
  return data;
}

TEST(GraphServiceEncoded, Int8RowsTravelEncodedAndTheCacheSavesRemoteBytes) {
  testing::TempDir dir;
  planted_in_two_parts(dir.path() / "parts", /*int8=*/true);
  const std::string cluster = fmt::format("test{}-int8", ::getpid());
  std::vector<std::unique_ptr<GraphServer>> servers;
  std::vector<std::vector<std::string>> addresses(2);
  for (int64_t part = 0; part < 2; ++part) {
    servers.push_back(
        std::make_unique<GraphServer>(ServerOptions{.partition_dir = dir.path() / "parts",
                                                    .part = part,
                                                    .token = testing::kClusterToken,
                                                    .role = ServerRole::kMain,
                                                    .cluster_id = cluster}));
    addresses[part].push_back(servers.back()->address());
  }
  // The reference: the joined parts decoded locally.
  std::vector<partition::Partition> parts;
  for (int64_t part = 0; part < 2; ++part)
    parts.push_back(partition::load_partition(dir.path() / "parts", part));
  const partition::Partition whole = partition::join_partitions(parts);
  features::TensorFeatureSource reference;
  reference.add("feat", whole.features.at("feat"), whole.feature_scales.at("feat"));
  const at::Tensor all = at::randperm(2000, at::kLong);
  const at::Tensor expected = reference.gather("feat", all);

  const auto mapped = SharedPartition::attach(cluster, 0, std::chrono::seconds(5));
  const DistGraph graph(addresses, {.token = testing::kClusterToken}, &mapped->part());
  EXPECT_EQ(graph.info("feat").dtype, at::kFloat);
  EXPECT_TRUE(at::equal(graph.gather("feat", all), expected));
  // Only part 1's rows come over RPC, as int8 plus a float32 scale each: 16 + 4 bytes.
  const int64_t remote = 2000 - mapped->part().node_end;
  EXPECT_EQ(graph.pulled_bytes(/*reset=*/true), remote * (16 + 4));

  // A SIEVE cache of remote rows in front (one shard: room for exactly all of them): the
  // second gather moves nothing.
  const features::CachedFeatureSource cache(graph, "feat",
                                            {.policy = features::CachePolicy::kSieve,
                                             .capacity_bytes = 2000 * 16 * 4,
                                             .bypass_begin = mapped->part().node_begin,
                                             .bypass_end = mapped->part().node_end,
                                             .shards = 1});
  EXPECT_TRUE(at::equal(cache.gather("feat", all), expected));
  EXPECT_EQ(graph.pulled_bytes(/*reset=*/true), remote * (16 + 4));
  EXPECT_TRUE(at::equal(cache.gather("feat", all), expected));
  EXPECT_EQ(graph.pulled_bytes(/*reset=*/true), 0);
  const features::CacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits, remote);
  EXPECT_EQ(stats.misses, remote);
  EXPECT_EQ(stats.bypassed, 2 * (2000 - remote));
}

// Parts whose features stay on disk: main and backup servers read "feat" from the part's file
// (through a cache), the shared memory holds the rest of the part, and a trainer's mapped part
// pulls its own rows from the servers; the rows are the partition's.
TEST(GraphServiceDisk, MainAndBackupServeFeaturesFromThePartsFiles) {
  testing::TempDir dir;
  planted_in_two_parts(dir.path() / "parts", /*int8=*/false);
  std::vector<partition::Partition> parts;
  for (int64_t part = 0; part < 2; ++part)
    parts.push_back(partition::load_partition(dir.path() / "parts", part));
  const at::Tensor expected = partition::join_partitions(parts).features.at("feat");
  for (const auto policy : {features::CachePolicy::kNone, features::CachePolicy::kSieve,
                            features::CachePolicy::kStatic}) {
    const std::string cluster = fmt::format("test{}-disk-{}", ::getpid(), static_cast<int>(policy));
    const MainAndBackupServers servers(dir.path() / "parts", cluster, /*on_disk=*/true,
                                       {.policy = policy, .capacity_bytes = 300 * 16 * 4});
    const DistGraph graph(servers.addresses, {.token = testing::kClusterToken});
    EXPECT_EQ(graph.info("feat").dtype, at::kFloat);
    const at::Tensor all = at::randperm(2000, at::kLong);
    for (int repeat = 0; repeat < 2; ++repeat) {  // main and backup of each part
      EXPECT_TRUE(at::equal(graph.gather("feat", all), expected.index_select(0, all)))
          << name_of(policy);
    }
    const auto mapped = SharedPartition::attach(cluster, 0, std::chrono::seconds(5));
    EXPECT_EQ(mapped->part().features.count("feat"), 0u);  // not in shared memory
    EXPECT_TRUE(mapped->part().labels.defined());
    const DistGraph trainer_view(servers.addresses, {.token = testing::kClusterToken},
                                 &mapped->part());
    EXPECT_TRUE(at::equal(trainer_view.gather("feat", all), expected.index_select(0, all)));
    EXPECT_EQ(trainer_view.pulled_bytes(/*reset=*/true), 2000 * 16 * 4);  // its own rows too
    // So the trainer's cache keeps its own part's rows as well: after the fill, nothing moves.
    const auto cache = make_feature_cache(
        trainer_view, {.policy = features::CachePolicy::kStatic, .bytes = 1 << 20}, 2000,
        &mapped->part(), dir.path() / "parts", 0);
    EXPECT_EQ(trainer_view.pulled_bytes(/*reset=*/true), 2000 * 16 * 4);  // filled once
    EXPECT_TRUE(at::equal(cache->gather("feat", all), expected.index_select(0, all)));
    EXPECT_EQ(trainer_view.pulled_bytes(/*reset=*/true), 0);
  }
  // Options refused by field: a cache without disk storage, disk storage of encoded rows.
  const auto field_of = [](const ServerOptions& options) {
    try {
      const GraphServer server(options);
    } catch (const OptionError& e) {
      return e.field();
    }
    return std::string("(none)");
  };
  EXPECT_EQ(field_of({.partition_dir = dir.path() / "parts",
                      .insecure = true,
                      .disk_cache = {.policy = features::CachePolicy::kSieve,
                                     .capacity_bytes = 1 << 20}}),
            "cache_policy");
  planted_in_two_parts(dir.path() / "int8", /*int8=*/true);
  EXPECT_EQ(
      field_of({.partition_dir = dir.path() / "int8", .insecure = true, .features_on_disk = true}),
      "feature_storage");
}

TEST(GraphServer, ServesOverTlsAndRefusesPlaintextClients) {
  testing::TempDir dir;
  const io::Dataset data = io::generate_planted(
      {.num_nodes = 500, .num_classes = 2, .avg_degree = 4, .feat_dim = 4, .seed = 1});
  partition::write_partitions(data, partition::assign_random(data.num_nodes(), 1, 0), 1,
                              dir.path() / "parts", {.method = "random"});
  ASSERT_TRUE(graphloom::testing::write_self_signed_certificate(dir.path()))
      << "openssl is needed (scripts/install-deps.sh)";
  GraphServer server({.partition_dir = dir.path() / "parts",
                      .token = testing::kClusterToken,
                      .tls_cert = dir.path() / "cert.pem",
                      .tls_key = dir.path() / "key.pem"});
  const GraphClient secure(
      server.address(),
      {.token = testing::kClusterToken, .retries = 0, .tls_ca = dir.path() / "cert.pem"});
  EXPECT_EQ(secure.health(), "serving");
  const GraphClient plaintext(server.address(),
                              {.token = testing::kClusterToken,
                               .deadline = std::chrono::seconds(3) * testing::kSlowdown,
                               .retries = 0});
  const std::string error = error_of([&] { plaintext.health(); });
  EXPECT_NE(error.find(server.address()), std::string::npos) << error;
  EXPECT_NE(error_of([&] {
              GraphServer({.partition_dir = dir.path() / "parts",
                           .token = testing::kClusterToken,
                           .tls_cert = dir.path() / "cert.pem"});
            }).find("tls_key is missing"),
            std::string::npos);
}

// A trainer or backup waiting for a part whose main server failed to start hears that
// server's error at once, not a timeout; one waiting for a server that never started is told
// which server and segment to look for.
TEST(SharedPartition, WaitersGetTheMainServersOwnErrorAtOnce) {
  const testing::TempDir dir;
  const io::Dataset data = io::generate_planted({.num_nodes = 200, .seed = 3});
  partition::write_partitions(data, partition::assign_random(200, 2, 1), 2, dir.path() / "parts",
                              {.method = "random"});
  std::ofstream(dir.path() / "parts" / "part-0" / "indptr.npy") << "not an npy file";
  const std::string cluster = fmt::format("test{}-failed", ::getpid());
  const std::string server_error = error_of([&] {
    GraphServer({.partition_dir = dir.path() / "parts",
                 .part = 0,
                 .token = testing::kClusterToken,
                 .role = ServerRole::kMain,
                 .cluster_id = cluster});
  });
  ASSERT_NE(server_error.find("indptr.npy"), std::string::npos) << server_error;
  const auto start = std::chrono::steady_clock::now();
  const std::string waiter_error =
      error_of([&] { SharedPartition::attach(cluster, 0, std::chrono::seconds(60)); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(waiter_error.find("its main server failed to start (0 s ago): " + server_error),
            std::string::npos)
      << waiter_error;
  EXPECT_GE(SharedPartition::remove_segments(cluster, 0), 1);  // the record goes with the part
  const std::string timeout_error =
      error_of([&] { SharedPartition::attach(cluster, 0, std::chrono::milliseconds(100)); });
  EXPECT_NE(timeout_error.find("`graphloom serve --part 0` with cluster id '" + cluster + "'"),
            std::string::npos)
      << timeout_error;
}

TEST(GraphServer, RefusesToStartWithoutAToken) {
  testing::TempDir dir;
  const std::string error = error_of([&] {
    GraphServer server({.partition_dir = dir.path(), .part = 0, .address = "127.0.0.1:0"});
  });
  EXPECT_NE(error.find("cluster token"), std::string::npos) << error;
}

}  // namespace
}  // namespace graphloom::distributed
