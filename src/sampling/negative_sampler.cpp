// Negative samplers; each positive edge draws from its own keyed stream.
#include "graphloom/sampling/negative_sampler.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"

namespace graphloom::sampling {
namespace {

void check_pairs(const at::Tensor& src, const at::Tensor& dst, int64_t k) {
  GL_CHECK(src.scalar_type() == at::kLong && dst.scalar_type() == at::kLong && src.dim() == 1 &&
               src.numel() == dst.numel(),
           "positive edges: src and dst must be 1-D int64 tensors of equal length");
  GL_CHECK(k > 0, "negatives per positive must be > 0, got {}", k);
}

// Fills dst[i * k + j] with draw(rng) for every positive i; with `draw_src`, src[i * k + j]
// too (drawn first), else src[i * k + j] is the positive's source.
template <typename Draw>
NegativeEdges sample_with(const at::Tensor& src, int64_t k, uint64_t random_key, bool draw_src,
                          Draw draw) {
  const int64_t n = src.numel();
  NegativeEdges out{draw_src ? at::empty({n * k}, at::kLong) : at::repeat_interleave(src, k),
                    at::empty({n * k}, at::kLong)};
  int64_t* drawn_src = draw_src ? out.src.data_ptr<int64_t>() : nullptr;
  int64_t* dst = out.dst.data_ptr<int64_t>();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    RandomStream rng(stream_key({random_key, static_cast<uint64_t>(i)}));
    for (int64_t j = 0; j < k; ++j) {
      if (drawn_src != nullptr) drawn_src[i * k + j] = draw(rng);
      dst[i * k + j] = draw(rng);
    }
  }
  return out;
}

}  // namespace

UniformNegativeSampler::UniformNegativeSampler(int64_t num_nodes, bool both_ends)
    : num_nodes_(num_nodes), both_ends_(both_ends) {
  GL_CHECK(num_nodes > 0, "negative sampling needs at least one node");
}

UniformNegativeSampler::UniformNegativeSampler(const at::Tensor& candidates)
    : num_nodes_(candidates.numel()), candidates_(candidates.to(at::kLong).contiguous()) {
  GL_CHECK(num_nodes_ > 0, "negative sampling needs at least one candidate node");
}

NegativeEdges UniformNegativeSampler::sample(const at::Tensor& src, const at::Tensor& dst,
                                             int64_t k, uint64_t random_key) const {
  check_pairs(src, dst, k);
  const auto n = static_cast<uint64_t>(num_nodes_);
  const int64_t* candidate = candidates_.defined() ? candidates_.data_ptr<int64_t>() : nullptr;
  return sample_with(src.contiguous(), k, random_key, both_ends_,
                     [n, candidate](RandomStream& rng) {
                       const auto i = static_cast<int64_t>(rng.uniform(n));
                       return candidate != nullptr ? candidate[i] : i;
                     });
}

DegreeNegativeSampler::DegreeNegativeSampler(const at::Tensor& degrees, double power) {
  GL_CHECK(degrees.dim() == 1 && degrees.numel() > 0, "degrees must be a non-empty 1-D tensor");
  const at::Tensor weights = at::pow(degrees.to(at::kDouble), power);
  const double total = weights.sum().item<double>();
  GL_CHECK(total > 0, "degree-based negative sampling needs at least one node with edges");
  cdf_ = at::cumsum(weights, 0) / total;
}

NegativeEdges DegreeNegativeSampler::sample(const at::Tensor& src, const at::Tensor& dst, int64_t k,
                                            uint64_t random_key) const {
  check_pairs(src, dst, k);
  const double* cdf = cdf_.data_ptr<double>();
  const int64_t n = cdf_.numel();
  return sample_with(src.contiguous(), k, random_key, false, [cdf, n](RandomStream& rng) {
    const double u = rng.uniform_real();
    return std::min<int64_t>(std::upper_bound(cdf, cdf + n, u) - cdf, n - 1);
  });
}

}  // namespace graphloom::sampling
