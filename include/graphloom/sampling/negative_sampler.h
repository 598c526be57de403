// Negative samplers for link prediction: k corrupted destinations per positive edge.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace graphloom::sampling {

struct NegativeEdges {
  // int64 [num_positive * k]: each positive source repeated k times, or drawn (corrupts_src()).
  at::Tensor src;
  at::Tensor dst;  // int64 [num_positive * k]: sampled destinations
};

class NegativeSampler {
 public:
  virtual ~NegativeSampler() = default;
  // `k` negatives per positive (src, dst) pair; draws keyed by (random_key, edge position).
  virtual NegativeEdges sample(const at::Tensor& src, const at::Tensor& dst, int64_t k,
                               uint64_t random_key) const = 0;
  // Whether the negatives' sources are drawn too (not the positives' sources repeated).
  virtual bool corrupts_src() const { return false; }
};

// Destinations uniform over all nodes (DGL's Uniform negative sampler), or over a candidate
// set (the nodes of one type of a typed graph). With `both_ends`, the sources are drawn the same
// way too: uniform node pairs, PyG's binary negative sampling.
class UniformNegativeSampler : public NegativeSampler {
 public:
  explicit UniformNegativeSampler(int64_t num_nodes, bool both_ends = false);
  // `candidates`: int64 node ids, not empty.
  explicit UniformNegativeSampler(const at::Tensor& candidates);
  NegativeEdges sample(const at::Tensor& src, const at::Tensor& dst, int64_t k,
                       uint64_t random_key) const override;
  bool corrupts_src() const override { return both_ends_; }

 private:
  int64_t num_nodes_ = 0;
  at::Tensor candidates_;  // undefined: all num_nodes_ nodes
  bool both_ends_ = false;
};

// Destinations drawn with probability proportional to degree^power (word2vec's unigram^0.75,
// PinSage/DGL GlobalUniform variants): popular nodes are harder negatives.
class DegreeNegativeSampler : public NegativeSampler {
 public:
  // `degrees`: int64 [num_nodes].
  DegreeNegativeSampler(const at::Tensor& degrees, double power = 0.75);
  NegativeEdges sample(const at::Tensor& src, const at::Tensor& dst, int64_t k,
                       uint64_t random_key) const override;

 private:
  at::Tensor cdf_;  // float64 [num_nodes], cumulative probability
};

}  // namespace graphloom::sampling
