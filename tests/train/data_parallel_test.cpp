// Data-parallel pieces with ranks as threads: averaged gradients (overlapped and not), Join
// with deliberately uneven step counts, divergence detection, distributed layer-wise inference.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <mutex>

#include "distributed/dist_fixtures.h"
#include "graphloom/io/generators.h"
#include "graphloom/nn/models.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/train/gradient_sync.h"
#include "graphloom/train/inference.h"
#include "graphloom/train/node_classification.h"
#include "support/test_support.h"

namespace graphloom::train {
namespace {

using testing::run_ranks;

// The global generator is shared by the rank threads: seeding and drawing must not interleave.
std::mutex g_init_mutex;

torch::nn::Sequential small_net(int seed) {
  std::lock_guard lock(g_init_mutex);
  torch::manual_seed(seed);
  return torch::nn::Sequential(torch::nn::Linear(8, 16), torch::nn::ReLU(),
                               torch::nn::Linear(16, 16), torch::nn::ReLU(),
                               torch::nn::Linear(16, 3));
}

torch::Tensor batch_of(int rank, int step) {
  return torch::sin(torch::arange(40, torch::kFloat).reshape({5, 8}) * (rank + 1) + step);
}

// The gradients `net` gets from `x` on its own (no synchronisation).
std::vector<torch::Tensor> local_grads(torch::nn::Sequential net, const torch::Tensor& x) {
  net->zero_grad();
  net->forward(x).pow(2).mean().backward();
  std::vector<torch::Tensor> grads;
  for (const auto& p : net->parameters()) grads.push_back(p.grad().clone());
  return grads;
}

// Overlapped or not, and through the group's Gloo or a backend of the gradients' own
// (dist_backend gloo: the path NCCL takes on GPUs).
TEST(GradientSync, AveragesGradientsOverRanks) {
  for (const auto& [overlap, backend] :
       {std::pair{true, SyncBackend::kAuto}, std::pair{false, SyncBackend::kAuto},
        std::pair{true, SyncBackend::kGloo}}) {
    run_ranks(2, [&](distributed::ProcessGroup& group) {
      // Different initialisation per rank: the broadcast makes them rank 0's.
      torch::nn::Sequential net = small_net(group.rank());
      GradientSynchronizer sync(net->parameters(), group,
                                {.bucket_cap_mb = 1e-4, .overlap = overlap, .backend = backend});
      EXPECT_GT(sync.num_buckets(), 2);
      EXPECT_EQ(sync.backend_name(), backend == SyncBackend::kGloo ? "gloo (device)" : "gloo");
      sync.broadcast_parameters(0);
      torch::nn::Sequential reference = small_net(0);
      for (std::size_t i = 0; i < net->parameters().size(); ++i) {
        EXPECT_TRUE(torch::equal(net->parameters()[i], reference->parameters()[i]));
      }
      const auto mine = local_grads(reference, batch_of(group.rank(), 0));
      const auto theirs = local_grads(reference, batch_of(1 - group.rank(), 0));

      net->zero_grad();
      net->forward(batch_of(group.rank(), 0)).pow(2).mean().backward();
      EXPECT_EQ(sync.synchronize(), 2);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        EXPECT_TRUE(
            torch::allclose(net->parameters()[i].grad(), (mine[i] + theirs[i]) / 2, 1e-6, 1e-7))
            << "parameter " << i << " overlap " << overlap;
      }
      sync.check_parameters_in_sync(1);
    });
  }
}

TEST(GradientSync, NcclOnTheCpuIsAnOptionErrorOnDistBackend) {
  run_ranks(2, [&](distributed::ProcessGroup& group) {
    torch::nn::Sequential net = small_net(0);
    try {
      GradientSynchronizer sync(net->parameters(), group, {.backend = SyncBackend::kNccl});
      ADD_FAILURE() << "nccl accepted for parameters on the CPU";
    } catch (const OptionError& e) {
      EXPECT_EQ(e.field(), "dist_backend");
      EXPECT_NE(std::string(e.what()).find("the model is on cpu"), std::string::npos) << e.what();
    }
    // auto on the CPU keeps the group's own Gloo.
    GradientSynchronizer sync(net->parameters(), group);
    EXPECT_EQ(sync.backend_name(), "gloo");
  });
}

TEST(GradientSync, JoinCompletesUnevenInputsWithIdenticalReplicas) {
  const std::vector<int> steps_of_rank{5, 2, 0};  // rank 2 has no batch at all
  std::vector<std::vector<torch::Tensor>> final_parameters(3);
  std::vector<int64_t> rounds(3);
  run_ranks(3, [&](distributed::ProcessGroup& group) {
    torch::nn::Sequential net = small_net(group.rank());
    GradientSynchronizer sync(net->parameters(), group, {.bucket_cap_mb = 1e-4});
    sync.broadcast_parameters(0);
    torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(0.05));
    int64_t step = 0;
    for (int s = 0; s < steps_of_rank[group.rank()]; ++s, ++step) {
      optimizer.zero_grad();
      net->forward(batch_of(group.rank(), s)).pow(2).mean().backward();
      EXPECT_GE(sync.synchronize(), 1);
      optimizer.step();
    }
    while (const int64_t contributors = sync.join()) {
      // Rank 0 alone is left after step 2: the joined ranks see one contributor.
      EXPECT_EQ(contributors, step < 2 ? 2 : 1);
      optimizer.step();
      ++step;
    }
    sync.check_parameters_in_sync(step);
    rounds[group.rank()] = step;
    for (const auto& p : net->parameters()) final_parameters[group.rank()].push_back(p.clone());
  });
  EXPECT_EQ(rounds, (std::vector<int64_t>{5, 5, 5}));
  for (int rank = 1; rank < 3; ++rank) {
    for (std::size_t i = 0; i < final_parameters[0].size(); ++i) {
      EXPECT_TRUE(torch::equal(final_parameters[0][i], final_parameters[rank][i]));
    }
  }
}

TEST(GradientSync, CheckSyncDetectsDivergedReplicas) {
  std::mutex mutex;
  std::vector<std::string> errors;
  run_ranks(2, [&](distributed::ProcessGroup& group) {
    torch::nn::Sequential net = small_net(0);
    GradientSynchronizer sync(net->parameters(), group);
    sync.check_parameters_in_sync(0);  // identical: no error
    if (group.rank() == 1) {
      torch::NoGradGuard no_grad;
      net->parameters()[0][0][0].add_(1e-6);
    }
    const std::string error = testing::error_of([&] { sync.check_parameters_in_sync(7); });
    std::lock_guard lock(mutex);
    errors.push_back(error);
  });
  ASSERT_EQ(errors.size(), 2u);
  for (const std::string& error : errors) {
    EXPECT_NE(error.find("differ across ranks at step 7"), std::string::npos) << error;
  }
}

// fp16 under data parallelism: every rank unscales the same averaged gradients (Join's shadow
// steps too) and so skips the same steps and keeps the same scale; --check-sync compares the
// replicas bit for bit after every step. Ranks get uneven shares, so Join runs.
TEST(GradientSync, Fp16RanksStayIdenticalThroughUnevenShares) {
  const io::Dataset data = io::generate_planted(
      {.num_nodes = 1000, .num_classes = 3, .avg_degree = 6, .feat_dim = 8, .seed = 4});
  const int64_t train = data.splits.at("train").numel();
  int world = 2;
  while (train % world == 0) ++world;  // one rank gets an item more: one batch more
  TrainOptions o;
  o.model.hidden = 16;
  o.fanouts = {4, 4};
  o.batch_size = train / world;
  o.epochs = 2;
  o.lr = 0.01;
  o.progress = false;
  o.final_test = false;
  o.precision = Precision::kFp16;
  o.check_sync_every = 1;
  std::vector<int64_t> steps(world);
  run_ranks(world, [&](distributed::ProcessGroup& group) {
    steps[group.rank()] = train_node_classification(data, o, &group).steps;
  });
  for (const int64_t s : steps) EXPECT_EQ(s, 4);  // 2 gradient rounds per epoch on every rank
}

TEST(DistributedInference, EqualsSingleProcessInference) {
  const io::Dataset data = io::generate_planted(
      {.num_nodes = 700, .num_classes = 4, .avg_degree = 6, .feat_dim = 16, .seed = 3});
  const sampling::LocalNeighborSource source(data.graph);
  const at::Tensor features = data.node_features.at("feat");
  torch::manual_seed(0);
  auto model =
      nn::make_model({.kind = nn::ModelKind::kSage, .in = 16, .hidden = 8, .out = 4, .layers = 3});
  const at::Tensor expected = layerwise_inference(*model, source, features, 50);
  std::vector<at::Tensor> results(3);
  run_ranks(3, [&](distributed::ProcessGroup& group) {
    std::shared_ptr<nn::GnnModel> replica;
    {
      std::lock_guard lock(g_init_mutex);
      torch::manual_seed(0);
      replica = nn::make_model(
          {.kind = nn::ModelKind::kSage, .in = 16, .hidden = 8, .out = 4, .layers = 3});
    }
    results[group.rank()] =
        layerwise_inference(*replica, source, features, 50, false, &group).clone();
  });
  for (const at::Tensor& result : results) {
    EXPECT_TRUE(at::allclose(result, expected, 1e-5, 1e-6));
  }
}

}  // namespace
}  // namespace graphloom::train
