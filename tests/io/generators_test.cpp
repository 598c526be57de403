// Generators: deterministic under their seed whatever the thread count, and the planted graph
// has the homophily and feature signal it promises.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <omp.h>
#include <functional>
#include <string>

#include "graphloom/base/error.h"
#include "graphloom/io/generators.h"

namespace graphloom::io {
namespace {

TEST(Planted, DeterministicAcrossThreadCounts) {
  const PlantedOptions options{.num_nodes = 3000, .num_classes = 5, .seed = 11};
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Dataset one = generate_planted(options);
  omp_set_num_threads(2);
  const Dataset two = generate_planted(options);
  omp_set_num_threads(saved);
  EXPECT_TRUE(at::equal(one.graph.indices, two.graph.indices));
  EXPECT_TRUE(at::equal(one.node_features.at("feat"), two.node_features.at("feat")));
  EXPECT_TRUE(at::equal(one.labels, two.labels));
  EXPECT_TRUE(at::equal(one.splits.at("train"), two.splits.at("train")));
  const Dataset other = generate_planted({.num_nodes = 3000, .num_classes = 5, .seed = 12});
  EXPECT_FALSE(at::equal(one.labels, other.labels));
}

TEST(Planted, HasTheRequestedStructure) {
  const PlantedOptions options{
      .num_nodes = 20000, .num_classes = 4, .avg_degree = 10, .homophily = 0.7};
  const Dataset dataset = generate_planted(options);
  const auto& graph = dataset.graph;
  // Symmetric, no self-loops, average degree close to the request (a few duplicates merged).
  EXPECT_TRUE(at::equal(graph.in_degrees(), graph.out_degrees()));
  const at::Tensor dst = graph.destinations();
  const at::Tensor src = graph.indices.to(at::kLong);
  EXPECT_EQ((src == dst).sum().item<int64_t>(), 0);
  EXPECT_NEAR(graph.num_edges() / 20000.0, 10.0, 0.2);
  // Edge homophily: h plus the chance that a random endpoint shares the class, (1 - h) / C.
  const double same = (dataset.labels.index_select(0, src) == dataset.labels.index_select(0, dst))
                          .to(at::kDouble)
                          .mean()
                          .item<double>();
  EXPECT_NEAR(same, 0.7 + 0.3 / 4, 0.02);
  // Splits are disjoint and of the requested sizes.
  EXPECT_EQ(dataset.splits.at("train").numel(), 2000);
  EXPECT_EQ(dataset.splits.at("test").numel(), 4000);
  const at::Tensor all =
      at::cat({dataset.splits.at("train"), dataset.splits.at("valid"), dataset.splits.at("test")});
  EXPECT_EQ(std::get<0>(at::_unique(all)).numel(), all.numel());
}

// The error names the option's field, which the CLI turns into its flag and Python keeps.
std::string field_of_error(const std::function<void()>& generate) {
  try {
    generate();
  } catch (const OptionError& e) {
    return e.field();
  }
  return "no OptionError";
}

TEST(Planted, RejectsBadOptions) {
  EXPECT_EQ(field_of_error([] { generate_planted({.num_nodes = 0}); }), "num_nodes");
  EXPECT_EQ(field_of_error([] { generate_planted({.num_nodes = 100, .homophily = 1.5}); }),
            "homophily");
  EXPECT_EQ(field_of_error([] { generate_rmat({.scale = 41}); }), "scale");
  EXPECT_THROW(generate_planted({.num_nodes = 100, .train_fraction = 0.9}), Error);
}

TEST(Rmat, SizesSkewAndDeterminism) {
  const Dataset a = generate_rmat({.scale = 12, .edge_factor = 8, .seed = 3});
  EXPECT_EQ(a.num_nodes(), 4096);
  EXPECT_EQ(a.graph.num_edges(), 8 * 4096);
  // R-MAT is skewed: the largest in-degree is far above the mean of 8.
  EXPECT_GT(a.graph.in_degrees().max().item<int64_t>(), 80);
  const Dataset b = generate_rmat({.scale = 12, .edge_factor = 8, .seed = 3});
  EXPECT_TRUE(at::equal(a.graph.indices, b.graph.indices));
  EXPECT_THROW(generate_rmat({.scale = 0}), Error);
}

}  // namespace
}  // namespace graphloom::io
