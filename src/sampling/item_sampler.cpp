// Rank split of GraphBolt's DistributedItemSampler (count_split / calculate_range): each rank
// gets a contiguous share; whole leftover batches go to the lowest ranks, the one partial batch
// to the next rank.
#include "graphloom/sampling/item_sampler.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"
#include "graphloom/base/random.h"

namespace graphloom::sampling {
namespace {

struct Share {
  int64_t count;
  int64_t offset;
};

// Items of part `part` when `total` items are split over `parts` in units of `unit`.
Share count_split(int64_t total, int64_t parts, int64_t part, int64_t unit) {
  const int64_t quotient = total / (parts * unit);
  const int64_t remainder = total % (parts * unit);
  const int64_t full_extra = remainder / unit;
  const int64_t partial = remainder % unit;
  const int64_t extra = part < full_extra ? unit : (part == full_extra ? partial : 0);
  return {quotient * unit + extra, quotient * part * unit + std::min(part * unit, remainder)};
}

}  // namespace

ItemSampler::ItemSampler(at::Tensor items, ItemSamplerOptions options)
    : items_(std::move(items)), options_(options) {
  GL_CHECK(items_.defined() && items_.dim() >= 1, "item set must be a tensor with >= 1 dims");
  GL_CHECK(options_.batch_size > 0, "batch size must be positive, got {}", options_.batch_size);
  GL_CHECK(options_.world_size > 0 && options_.rank >= 0 && options_.rank < options_.world_size,
           "rank {} is outside [0, world size {})", options_.rank, options_.world_size);
  const int64_t total = items_.size(0);
  if (options_.weights.defined()) {
    const at::Tensor& weights = options_.weights;
    GL_CHECK(weights.dim() == 1 && weights.size(0) == total && weights.is_floating_point(),
             "item weights must be a float array of {} entries (one per item), got {} {}", total,
             dtype_name(weights.scalar_type()), weights.sizes());
    const at::Tensor values = weights.to(at::kDouble).contiguous();
    const double* w = values.data_ptr<double>();
    cumulative_weights_.resize(static_cast<std::size_t>(total));
    double sum = 0;
    for (int64_t i = 0; i < total; ++i) {
      GL_CHECK(std::isfinite(w[i]) && w[i] >= 0,
               "item weight {} is {}: weights must be finite and >= 0", i, w[i]);
      sum += w[i];
      cumulative_weights_[static_cast<std::size_t>(i)] = sum;
    }
    GL_CHECK(total == 0 || sum > 0, "item weights sum to 0: no item could be drawn");
  }
  const int64_t batch = options_.batch_size;
  const int64_t ranks = options_.world_size;
  const Share share = count_split(total, ranks, options_.rank, batch);
  start_offset_ = share.offset;
  assigned_count_ = share.count;
  if (!options_.drop_uneven_inputs) {
    output_count_ = options_.drop_last ? assigned_count_ / batch * batch : assigned_count_;
  } else if (!options_.drop_last) {
    // As many batches as the last rank (which has the fewest) yields.
    const int64_t fewest = count_split(total, ranks, ranks - 1, batch).count;
    output_count_ = std::min((fewest + batch - 1) / batch * batch, assigned_count_);
  } else {
    output_count_ = total / (batch * ranks) * batch;
  }
}

int64_t ItemSampler::num_batches() const {
  return (output_count_ + options_.batch_size - 1) / options_.batch_size;
}

at::Tensor ItemSampler::epoch_order(uint64_t epoch) const {
  // One sequence per (seed, epoch), identical on every rank.
  const int64_t total = items_.size(0);
  RandomStream rng(stream_key({options_.seed, epoch}));
  at::Tensor order =
      options_.weights.defined() ? at::empty({total}, at::kLong) : at::arange(total, at::kLong);
  int64_t* p = order.data_ptr<int64_t>();
  if (options_.weights.defined()) {
    const double sum = total > 0 ? cumulative_weights_.back() : 0;
    for (int64_t i = 0; i < total; ++i) {
      const double target = rng.uniform_real() * sum;
      // The first item whose running sum passes the target; zero-weight items never are. The
      // target stays below the sum, so one always does: the clamp only guards that.
      const auto found =
          std::upper_bound(cumulative_weights_.begin(), cumulative_weights_.end(), target);
      p[i] = std::min<int64_t>(found - cumulative_weights_.begin(), total - 1);
    }
  } else {
    for (int64_t i = total - 1; i > 0; --i) std::swap(p[i], p[rng.uniform(i + 1)]);
  }
  return order;
}

std::vector<at::Tensor> ItemSampler::batches(uint64_t epoch) const {
  const bool reordered = options_.shuffle || options_.weights.defined();
  at::Tensor order;
  if (reordered) {
    order = epoch_order(epoch).slice(0, start_offset_, start_offset_ + assigned_count_);
  }
  std::vector<at::Tensor> result;
  result.reserve(static_cast<std::size_t>(num_batches()));
  for (int64_t begin = 0; begin < output_count_; begin += options_.batch_size) {
    const int64_t end = std::min(begin + options_.batch_size, output_count_);
    result.push_back(
        reordered ? items_.index_select(0, order.slice(0, begin, end))
                  : items_.slice(0, start_offset_ + begin, start_offset_ + end).contiguous());
  }
  return result;
}

}  // namespace graphloom::sampling
