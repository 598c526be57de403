// The CUDA paths against their CPU counterparts, bit for bit: the tensor sampler on a device
// against the C++ kernel, each feature placement's gather against index_select, and the NCCL
// backend's collectives. ctest label `cuda`; without a CUDA build or a GPU every test reports
// SKIPPED by name.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <fmt/format.h>
#include <chrono>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <vector>

#include "nccl_backend.h"

#include "graphloom/base/device.h"
#include "graphloom/base/host_memory.h"
#include "graphloom/features/device_rows.h"
#include "graphloom/features/row_codec.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/temporal.h"
#include "graphloom/loader/buffer_pool.h"
#include "graphloom/loader/device_stager.h"
#include "graphloom/sampling/labor.h"
#include "graphloom/sampling/labor_importance.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/sampling/tensor_neighbor_source.h"

namespace graphloom {
namespace {

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) {
      GTEST_SKIP() << "SKIPPED: no CUDA device (a CUDA build of graphloom and a GPU are needed)";
    }
  }
  const c10::Device device_{c10::DeviceType::CUDA, 0};
};

graph::CscGraph hub_graph() {
  at::manual_seed(11);
  graph::CooInput input;
  const at::Tensor hub_edges = at::zeros({5000}, at::kLong);
  input.src =
      at::cat({at::randint(3000, {60000}, at::kLong), at::randint(3000, {5000}, at::kLong)});
  input.dst = at::cat({at::randint(3000, {60000}, at::kLong), hub_edges});
  input.num_nodes = 3000;
  input.keep_edge_ids = true;
  return graph::csc_from_coo(input);
}

// The graph in device memory and pinned in host memory (read by zero-copy), weighted draws
// with and without replacement included.
TEST_F(Cuda, TensorSamplerOnTheDevicePicksWhatTheCppKernelPicks) {
  graph::CscGraph graph = hub_graph();
  graph.weights =
      at::rand({graph.num_edges()}).masked_fill_(at::rand({graph.num_edges()}) < 0.2, 0);
  const sampling::LocalNeighborSource cpp(graph);
  const at::Tensor seeds =
      at::cat({at::zeros({3}, at::kLong), at::randint(3000, {2000}, at::kLong)});
  for (const auto placement : {sampling::CscPlacement::kDevice, sampling::CscPlacement::kPinned}) {
    const sampling::TensorNeighborSource gpu(graph, device_, placement);
    for (const bool replace : {false, true}) {
      for (const bool weighted : {false, true}) {
        for (const int64_t fanout : {-1, 1, 10, 25, 100}) {
          if (weighted && !replace && fanout > 64) continue;  // logarithm keys: the CPU only
          sampling::SampleOptions options;
          options.replace = replace && fanout >= 0;
          options.weighted = weighted;
          options.random_key = 77 + static_cast<uint64_t>(fanout);
          // Out-edges (the reversed graph, placed on first use) for every other fanout.
          if (fanout == 1 || fanout == 25) options.direction = sampling::EdgeDirection::kOut;
          const auto want = cpp.sample_neighbors(seeds, fanout, options);
          const auto got = gpu.sample_neighbors(seeds.to(device_), fanout, options);
          const std::string what =
              fmt::format("placement {} replace {} weighted {} fanout {}",
                          static_cast<int>(placement), replace, weighted, fanout);
          ASSERT_TRUE(got.neighbors.is_cuda()) << what;
          EXPECT_TRUE(at::equal(want.indptr, got.indptr.cpu())) << what;
          EXPECT_TRUE(at::equal(want.neighbors, got.neighbors.cpu())) << what;
          EXPECT_TRUE(at::equal(want.edge_ids, got.edge_ids.cpu())) << what;
        }
      }
    }
    // LABOR-0: the same kept edges from the same keyed variates.
    for (const int64_t fanout : {2, 10, 40}) {
      sampling::SampleOptions options;
      options.labor = sampling::labor_variates(3, 0, static_cast<uint64_t>(fanout), 1, {});
      const auto want = cpp.sample_neighbors(seeds, fanout, options);
      const auto got = gpu.sample_neighbors(seeds.to(device_), fanout, options);
      EXPECT_TRUE(at::equal(want.indptr, got.indptr.cpu())) << "labor " << fanout;
      EXPECT_TRUE(at::equal(want.edge_ids, got.edge_ids.cpu())) << "labor " << fanout;
    }
  }
}

// LABOR-* on the device: the candidates' probabilities solved by all rows at once equal the
// host's row-by-row ones, and the sampler's blocks carry weights and keep the host's edges
// (a kept edge can differ only where a variate falls within the solvers' tolerance of p).
TEST_F(Cuda, LaborImportanceSamplingOnTheDeviceKeepsTheHostsEdges) {
  const graph::CscGraph graph = hub_graph();
  const sampling::LocalNeighborSource cpp(graph);
  const sampling::TensorNeighborSource gpu(graph, device_, sampling::CscPlacement::kDevice);
  const at::Tensor seeds = at::randperm(3000, at::kLong).slice(0, 0, 600);
  const auto all = cpp.sample_neighbors(seeds, -1, {});
  const sampling::CandidateRows rows{all.indptr, all.neighbors, at::full({600}, 5, at::kLong)};
  const sampling::CandidateRows device_rows{rows.indptr.to(device_), rows.keys.to(device_),
                                            rows.fanouts.to(device_)};
  const at::Tensor want = sampling::labor_inclusion_probabilities(rows, 3);
  const at::Tensor got = sampling::labor_inclusion_probabilities(device_rows, 3);
  EXPECT_TRUE(at::allclose(want, got.cpu(), 2e-3, 1e-9));
  const sampling::NeighborSamplerOptions options{.fanouts = {5, 10},
                                                 .seed = 4,
                                                 .method = sampling::SamplingMethod::kLabor,
                                                 .labor = {.importance_sampling = 2}};
  const sampling::MiniBatch host = sampling::NeighborSampler(&cpp, options).sample(seeds, 0, 1);
  const sampling::MiniBatch device =
      sampling::NeighborSampler(&gpu, options).sample(seeds.to(device_), 0, 1);
  for (std::size_t l = 0; l < host.blocks.size(); ++l) {
    const auto& a = host.blocks[l];
    const auto& b = device.blocks[l];
    ASSERT_TRUE(b.edge_weights.defined() && b.edge_weights.is_cuda());
    EXPECT_NEAR(static_cast<double>(b.num_edges()), static_cast<double>(a.num_edges()),
                0.001 * static_cast<double>(a.num_edges()) + 2)
        << l;
  }
}

// Temporal sampling on the device: each column's usable prefix by binary search, the picks,
// and multi-hop blocks of (node, time) sources relabeled by sorting, as on the CPU.
TEST_F(Cuda, TemporalSamplingOnTheDeviceBuildsTheCpuBlocks) {
  const graph::CscGraph plain = hub_graph();
  const graph::CscGraph graph =
      graph::sorted_by_time(plain, at::Tensor(), at::randint(1000, {plain.num_edges()}, at::kLong));
  const sampling::LocalNeighborSource cpp(graph);
  const sampling::NeighborSamplerOptions options{.fanouts = {5, 10}, .seed = 4};
  const sampling::NeighborSampler cpp_sampler(&cpp, options);
  const at::Tensor seeds = at::randperm(3000, at::kLong).slice(0, 0, 500);
  const at::Tensor times = at::randint(1000, {500}, at::kLong);
  for (const auto placement : {sampling::CscPlacement::kDevice, sampling::CscPlacement::kPinned}) {
    const sampling::TensorNeighborSource gpu(graph, device_, placement);
    const sampling::NeighborSampler gpu_sampler(&gpu, options);
    const sampling::MiniBatch want = cpp_sampler.sample(seeds, times, 0, 1);
    // Host seeds and times, as the loader hands them over.
    const sampling::MiniBatch got = gpu_sampler.sample(seeds, times, 0, 1);
    for (std::size_t l = 0; l < want.blocks.size(); ++l) {
      EXPECT_TRUE(at::equal(want.blocks[l].src_ids, got.blocks[l].src_ids.cpu())) << l;
      EXPECT_TRUE(at::equal(want.blocks[l].src_times, got.blocks[l].src_times.cpu())) << l;
      EXPECT_TRUE(at::equal(want.blocks[l].indices, got.blocks[l].indices.cpu())) << l;
    }
  }
}

// A device tensor over host memory reads that memory in place: a later write on the host is
// what the device sees. Memory registered already (torch's pinned allocator, a wider view) is
// used as it is; a range that sticks out of another registration is copied to pinned memory;
// a read-only mapping (a feature file mapped PROT_READ) registers too.
TEST_F(Cuda, HostMemoryOnTheDeviceIsReadInPlace) {
  const at::Tensor host = at::zeros({1 << 20}, at::kFloat);
  const at::Tensor view = host_memory_on_device(host, device_, "test");
  ASSERT_TRUE(view.is_cuda());
  host.fill_(2.0f);
  EXPECT_EQ(view.sum().item<double>(), 2.0 * (1 << 20));
  const at::Tensor inner = host_memory_on_device(host.narrow(0, 1000, 5000), device_, "test");
  EXPECT_EQ(inner.sum().item<double>(), 2.0 * 5000);
  const at::Tensor pinned = at::full({4096}, 3.0f, at::TensorOptions().pinned_memory(true));
  EXPECT_EQ(host_memory_on_device(pinned, device_, "test").sum().item<double>(), 3.0 * 4096);
  const at::Tensor wider = at::ones({1 << 21}, at::kFloat);
  const at::Tensor first = host_memory_on_device(wider.narrow(0, 0, 1 << 20), device_, "test");
  const at::Tensor overlapping =
      host_memory_on_device(wider.narrow(0, (1 << 20) - 8, 1 << 20), device_, "test");
  EXPECT_EQ(overlapping.sum().item<double>(), 1 << 20);
  const std::size_t bytes = std::size_t{1} << 22;
  void* memory = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  {
    const at::Tensor read_only = at::from_blob(memory, {int64_t(bytes / 4)}, at::kFloat);
    EXPECT_EQ(host_memory_on_device(read_only, device_, "test").sum().item<double>(), 0.0);
  }
  ::munmap(memory, bytes);
}

// Row sizes that take each word width of the kernel: 16-byte, 4-byte and single bytes.
std::vector<at::Tensor> tables() {
  at::manual_seed(5);
  return {at::randn({5000, 64}), at::randn({5000, 3}), at::randint(-9, 9, {5000, 3}, at::kChar),
          at::randn({5000, 5, 2}).to(at::kHalf)};
}

TEST_F(Cuda, EveryPlacementGathersTheRowsIndexSelectGathers) {
  const at::Tensor ids = at::randint(5000, {4096}, at::kLong);
  for (const at::Tensor& table : tables()) {
    for (const auto placement :
         {features::FeaturePlacement::kCpu, features::FeaturePlacement::kPinned,
          features::FeaturePlacement::kDevice, features::FeaturePlacement::kAuto}) {
      const features::DeviceRows rows(table, device_, placement);
      const at::Tensor got = rows.gather(ids.to(device_));
      ASSERT_TRUE(got.is_cuda());
      EXPECT_TRUE(at::equal(got.cpu(), table.index_select(0, ids)))
          << name_of(placement) << " " << table.sizes();
    }
  }
}

// int8 with row scales and bfloat16 go to the device as stored; the rows it decodes are the
// float32 rows the host decodes, bit for bit, cache hits included.
TEST_F(Cuda, EncodedRowsDecodeOnTheDeviceAsOnTheHost) {
  const at::Tensor table = at::randn({5000, 48});
  const at::Tensor ids = at::randint(5000, {4096}, at::kLong);
  for (const c10::ScalarType dtype : {at::kChar, at::kBFloat16, at::kHalf}) {
    const features::EncodedRows encoded = features::encode_rows(table, dtype);
    at::Tensor want = at::empty({ids.numel(), 48}, at::kFloat);
    features::gather_decoded_rows(encoded, ids, want);
    for (const auto placement :
         {features::FeaturePlacement::kCpu, features::FeaturePlacement::kPinned,
          features::FeaturePlacement::kDevice}) {
      features::DeviceRows rows(encoded, device_, placement);
      rows.cache_rows(at::arange(0, 5000, 7, at::kLong));
      const at::Tensor got = rows.gather(ids.to(device_));
      ASSERT_TRUE(got.is_cuda());
      EXPECT_TRUE(at::equal(got.cpu(), want)) << c10::toString(dtype) << " " << name_of(placement);
    }
  }
}

TEST_F(Cuda, PinnedPlacementReadsAMappedMatrixInPlace) {
  // An mmap stands for a partition's shared memory or a memory-mapped .npy file.
  const int64_t rows = 1000, dim = 33;
  const std::size_t bytes = rows * dim * sizeof(float);
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  {
    const at::Tensor table = at::from_blob(memory, {rows, dim}, at::kFloat);
    table.copy_(at::randn({rows, dim}));
    const features::DeviceRows placed(table, device_, features::FeaturePlacement::kPinned);
    const at::Tensor ids = at::randint(rows, {777}, at::kLong);
    EXPECT_TRUE(at::equal(placed.gather(ids).cpu(), table.index_select(0, ids)));
  }
  ::munmap(memory, bytes);
}

// Batches staged one ahead on the side stream arrive whole, in order, while the compute stream
// is busy with work queued before them (a matmul chain that the staging must not wait for).
TEST_F(Cuda, StagedBatchesArriveWholeOnTheDeviceWhileItComputes) {
  const loader::DeviceStager stager(device_);
  std::vector<sampling::MiniBatch> host(4);
  for (int64_t i = 0; i < 4; ++i) {
    host[i].seeds = at::arange(i, i + 1000, at::kLong);
    host[i].features["feat"] = at::randn({1000, 256});
  }
  at::Tensor busy = at::randn({2048, 2048}, at::TensorOptions().device(device_));
  std::optional<loader::StagedBatch> next = stager.stage(host[0]);
  for (int64_t i = 0; i < 4; ++i) {
    loader::StagedBatch staged = std::move(*next);
    for (int k = 0; k < 8; ++k) busy = at::tanh(busy.mm(busy));
    next = stager.stage(i + 1 < 4 ? std::optional(host[i + 1]) : std::nullopt);
    const sampling::MiniBatch& batch = stager.ready(staged);
    ASSERT_TRUE(batch.features.at("feat").is_cuda());
    // Read on the compute stream, after the wait on the copies' event.
    EXPECT_TRUE(at::equal(batch.features.at("feat").mul(2).cpu(), host[i].features.at("feat") * 2));
    EXPECT_TRUE(at::equal(batch.seeds.cpu(), host[i].seeds));
  }
  EXPECT_FALSE(next.has_value());
}

// pin_memory: the loader's feature rows are gathered into pinned buffers, which staging then
// sends as they are.
TEST_F(Cuda, PinnedPoolBuffersArePageLockedAndReused) {
  loader::BufferPool pool(2, /*pinned=*/true);
  const void* storage = nullptr;
  {
    const at::Tensor rows = pool.take("feat", at::kFloat, {64}, 1000);
    EXPECT_TRUE(rows.is_pinned());
    storage = rows.storage().data();
  }
  const at::Tensor again = pool.take("feat", at::kFloat, {64}, 900);
  EXPECT_TRUE(again.is_pinned());
  EXPECT_EQ(again.storage().data(), storage);  // reused, not pinned again
}

// One rank is all a one-GPU machine can hold (NCCL refuses two ranks on one GPU): its
// collectives still make a communicator and run NCCL's kernels on the device.
TEST_F(Cuda, NcclBackendReducesAndBroadcastsOnTheDevice) {
  const auto store = c10::make_intrusive<c10d::HashStore>();
  const auto nccl =
      distributed::make_nccl_backend(store, 0, 1, std::chrono::seconds(60), "dist_backend");
  std::vector<at::Tensor> tensors{at::arange(6, at::TensorOptions(device_).dtype(at::kFloat))};
  nccl->allreduce(tensors)->wait();
  EXPECT_TRUE(at::equal(tensors[0].cpu(), at::arange(6, at::kFloat)));
  nccl->broadcast(tensors)->wait();
  EXPECT_TRUE(at::equal(tensors[0].cpu(), at::arange(6, at::kFloat)));
}

}  // namespace
}  // namespace graphloom
