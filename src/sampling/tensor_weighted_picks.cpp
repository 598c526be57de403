// The tensor sampler's weighted picks (tensor_weighted_picks.h). Lanes run in lock step: a lane
// that is done with a step draws nothing more in it, as its scalar stream would not.
#include "tensor_weighted_picks.h"

#include <limits>

#include "weighted_picks.h"

namespace graphloom::sampling {
namespace {

// One alias draw per active lane (a position, then a coin), as WeightedColumn::pick.
at::Tensor alias_pick(TensorRandomStreams& rng, const at::Tensor& alias, const at::Tensor& begin,
                      const at::Tensor& degree, const at::Tensor& active) {
  const at::Tensor j = rng.uniform(degree, active);
  const at::Tensor entry = alias.index_select(0, begin + j);
  const at::Tensor coin = rng.uniform_real(active);
  return at::where(coin < alias_keep(entry).to(at::kDouble), j, alias_other(entry));
}

// WeightedColumn::pick_unpicked for every lane at once: one draw over the fixed-point weights
// of each lane's column (fixed_point_weight) left after `picked` ([lanes, n]). Integer sums
// make the segmented sums exact whatever order the device adds in.
at::Tensor pick_unpicked(TensorRandomStreams& rng, const at::Tensor& weights,
                         const at::Tensor& begin, const at::Tensor& degree,
                         const at::Tensor& picked) {
  const int64_t lanes = begin.numel();
  const auto options = begin.options();
  const at::Tensor owner = at::arange(lanes, options).repeat_interleave(degree);
  const at::Tensor first = degree.cumsum(0) - degree;
  const at::Tensor local = at::arange(owner.numel(), options) - first.index_select(0, owner);
  at::Tensor weight =
      weights.index_select(0, begin.index_select(0, owner) + local).to(at::kDouble).clamp_min(0);
  const at::Tensor largest =
      at::zeros({lanes}, weight.options()).scatter_reduce_(0, owner, weight, "amax");
  at::Tensor fixed = at::where(
      weight > 0,
      (weight / largest.index_select(0, owner) * 0x1.0p32).ceil_().clamp_min_(1).to(at::kLong), 0);
  // The picks so far weigh nothing: lanes x picks entries, not a column x picks comparison.
  fixed.index_fill_(0, (first.unsqueeze(1) + picked).flatten(), 0);
  const at::Tensor remaining = at::zeros({lanes}, options).index_add_(0, owner, fixed);
  const at::Tensor target = rng.uniform(remaining, at::ones({lanes}, options.dtype(at::kBool)));
  // The first position whose running sum passes the lane's target.
  const at::Tensor running =
      fixed.cumsum(0) - (remaining.cumsum(0) - remaining).index_select(0, owner);
  const at::Tensor passes = running > target.index_select(0, owner);
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  const at::Tensor at_or_none = at::where(passes, at::arange(owner.numel(), options), kNone);
  const at::Tensor chosen =
      at::full({lanes}, kNone, options).scatter_reduce_(0, owner, at_or_none, "amin");
  return local.index_select(0, chosen);
}

}  // namespace

at::Tensor alias_keep(const at::Tensor& entries) {
  return entries.contiguous().view(at::kFloat).view({-1, 2}).select(1, 0);
}

at::Tensor alias_other(const at::Tensor& entries) {
  return entries.contiguous().view(at::kInt).view({-1, 2}).select(1, 1).to(at::kLong);
}

// The table is read only at the picked positions, so a hub costs its picks.
at::Tensor weighted_picks_with_replacement(TensorRandomStreams& rng, const at::Tensor& alias,
                                           const at::Tensor& begin, const at::Tensor& degree,
                                           int64_t picks) {
  const at::Tensor all = at::ones_like(degree, at::kBool);
  at::Tensor out = at::empty({degree.size(0), picks}, degree.options());
  for (int64_t n = 0; n < picks; ++n)
    out.select(1, n).copy_(alias_pick(rng, alias, begin, degree, all));
  return out;
}

at::Tensor weighted_picks_without_replacement(TensorRandomStreams& rng, const at::Tensor& alias,
                                              const at::Tensor& weights, const at::Tensor& begin,
                                              const at::Tensor& degree, int64_t picks) {
  constexpr int kRedraws = 8;  // WeightedColumn::pick_successively's
  at::Tensor out = at::full({degree.size(0), picks}, -1, degree.options());
  for (int64_t n = 0; n < picks; ++n) {
    at::Tensor j = at::full_like(degree, -1);
    const at::Tensor before = out.narrow(1, 0, n);
    for (int attempt = 0; attempt < kRedraws; ++attempt) {
      const at::Tensor active = j < 0;
      if (!active.any().item<bool>()) break;
      const at::Tensor candidate = alias_pick(rng, alias, begin, degree, active);
      const at::Tensor repeated = (before == candidate.unsqueeze(1)).any(1);
      j = at::where(active.logical_and(repeated.logical_not()), candidate, j);
    }
    const at::Tensor left = (j < 0).nonzero().squeeze(1);
    if (left.numel() > 0) {
      TensorRandomStreams subset = rng.subset(left);
      j.index_put_({left},
                   pick_unpicked(subset, weights, begin.index_select(0, left),
                                 degree.index_select(0, left), before.index_select(0, left)));
      rng.assign(left, subset);
    }
    out.select(1, n).copy_(j);
  }
  return out;
}

}  // namespace graphloom::sampling
