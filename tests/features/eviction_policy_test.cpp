// Each eviction policy of the feature cache against a reference model written plainly over row
// ids (queues as deques, front = oldest): on a skewed trace, the cache (one shard, one row per
// gather) hits exactly where the model hits, so it evicts exactly what the model evicts.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <vector>

#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/tensor_feature_source.h"

namespace graphloom::features {
namespace {

// A model cache: access() returns whether the row was held, admitting it otherwise.
class Model {
 public:
  explicit Model(int64_t capacity) : capacity_(capacity) {}
  virtual ~Model() = default;
  bool access(int64_t row) {
    if (held(row)) {
      hit(row);
      return true;
    }
    if (static_cast<int64_t>(size()) == capacity_) evict();
    insert(row);
    return false;
  }

 protected:
  virtual bool held(int64_t row) const = 0;
  virtual std::size_t size() const = 0;
  virtual void hit(int64_t row) = 0;
  virtual void evict() = 0;
  virtual void insert(int64_t row) = 0;
  static void remove(std::deque<int64_t>& queue, int64_t row) {
    queue.erase(std::find(queue.begin(), queue.end(), row));
  }
  int64_t capacity_;
};

// A FIFO (front = oldest) with a visited bit per row, set by a hit.
class VisitedFifoModel : public Model {
 public:
  using Model::Model;
  bool held(int64_t row) const override { return visited_.count(row) > 0; }
  std::size_t size() const override { return queue_.size(); }
  void hit(int64_t row) override { visited_[row] = true; }
  void insert(int64_t row) override {
    queue_.push_back(row);
    visited_[row] = false;
  }

 protected:
  std::deque<int64_t> queue_;
  std::map<int64_t, bool> visited_;
};

// The SIEVE paper's algorithm: the hand walks from the oldest entry towards the newest.
class SieveModel final : public VisitedFifoModel {
 public:
  using VisitedFifoModel::VisitedFifoModel;
  void evict() override {
    std::size_t i = hand_ >= 0 ? static_cast<std::size_t>(hand_) : 0;
    while (visited_[queue_[i]]) {
      visited_[queue_[i]] = false;
      i = i + 1 < queue_.size() ? i + 1 : 0;
    }
    visited_.erase(queue_[i]);
    queue_.erase(queue_.begin() + static_cast<int64_t>(i));
    hand_ = i < queue_.size() ? static_cast<int64_t>(i) : -1;
  }

 private:
  int64_t hand_ = -1;
};

class LruModel final : public Model {
 public:
  using Model::Model;
  bool held(int64_t row) const override {
    return std::find(queue_.begin(), queue_.end(), row) != queue_.end();
  }
  std::size_t size() const override { return queue_.size(); }
  void hit(int64_t row) override {
    remove(queue_, row);
    queue_.push_back(row);
  }
  void insert(int64_t row) override { queue_.push_back(row); }
  void evict() override { queue_.pop_front(); }

 private:
  std::deque<int64_t> queue_;
};

class ClockModel final : public VisitedFifoModel {
 public:
  using VisitedFifoModel::VisitedFifoModel;
  void evict() override {
    while (visited_[queue_.front()]) {
      visited_[queue_.front()] = false;
      queue_.push_back(queue_.front());
      queue_.pop_front();
    }
    visited_.erase(queue_.front());
    queue_.pop_front();
  }
};

// S3-FIFO: small queue of 10% of the slots, main queue, ghost of the main queue's size.
class S3FifoModel final : public Model {
 public:
  explicit S3FifoModel(int64_t capacity)
      : Model(capacity),
        small_capacity_(std::max<int64_t>(1, capacity / 10)),
        ghost_capacity_(std::max<int64_t>(1, capacity - small_capacity_)) {}
  bool held(int64_t row) const override { return frequency_.count(row) > 0; }
  std::size_t size() const override { return small_.size() + main_.size(); }
  void hit(int64_t row) override { frequency_[row] = std::min(frequency_[row] + 1, 3); }
  void insert(int64_t row) override {
    frequency_[row] = 0;
    const auto ghost = std::find(ghost_.begin(), ghost_.end(), row);
    if (ghost == ghost_.end()) {
      small_.push_back(row);
    } else {
      ghost_.erase(ghost);
      main_.push_back(row);
    }
  }
  void evict() override {
    for (;;) {
      if (static_cast<int64_t>(small_.size()) >= small_capacity_ || main_.empty()) {
        const int64_t row = small_.front();
        small_.pop_front();
        if (frequency_[row] > 0) {
          frequency_[row] = 0;
          main_.push_back(row);
          continue;
        }
        frequency_.erase(row);
        ghost_.push_back(row);
        if (static_cast<int64_t>(ghost_.size()) > ghost_capacity_) ghost_.pop_front();
        return;
      }
      const int64_t row = main_.front();
      main_.pop_front();
      if (frequency_[row] == 0) {
        frequency_.erase(row);
        return;
      }
      --frequency_[row];
      main_.push_back(row);
    }
  }

 private:
  int64_t small_capacity_, ghost_capacity_;
  std::deque<int64_t> small_, main_, ghost_;
  std::map<int64_t, int> frequency_;
};

std::unique_ptr<Model> model_of(CachePolicy policy, int64_t capacity) {
  switch (policy) {
    case CachePolicy::kSieve:
      return std::make_unique<SieveModel>(capacity);
    case CachePolicy::kLru:
      return std::make_unique<LruModel>(capacity);
    case CachePolicy::kClock:
      return std::make_unique<ClockModel>(capacity);
    default:
      return std::make_unique<S3FifoModel>(capacity);
  }
}

// Rows drawn with a heavy skew (a few hot rows, a long tail), plus a scan over the tail now and
// then: the pattern that separates the policies.
std::vector<int64_t> skewed_trace(int64_t rows, int64_t length) {
  at::manual_seed(3);
  const at::Tensor draws = (at::rand({length}).pow(4) * static_cast<double>(rows)).to(at::kLong);
  std::vector<int64_t> trace(draws.data_ptr<int64_t>(), draws.data_ptr<int64_t>() + length);
  for (int64_t at = 500; at + 60 < length; at += 700) {
    for (int64_t k = 0; k < 60; ++k) trace[at + k] = rows - 1 - k;
  }
  return trace;
}

// The cache's hit (true) or miss for each row of `trace`, one gather per row, one shard of
// `capacity` rows; every row it returns is checked against the table.
std::vector<bool> cache_outcomes(CachePolicy policy, int64_t capacity,
                                 const std::vector<int64_t>& trace) {
  const int64_t rows = *std::max_element(trace.begin(), trace.end()) + 1;
  const at::Tensor table = at::arange(rows * 2, at::kFloat).view({rows, 2});
  const TensorFeatureSource backing({{"feat", table}});
  const CachedFeatureSource cache(
      backing, "feat", {.policy = policy, .capacity_bytes = capacity * 2 * 4, .shards = 1});
  std::vector<bool> hits;
  for (const int64_t id : trace) {
    const int64_t before = cache.stats().hits;
    const at::Tensor row = cache.gather("feat", at::tensor({id}, at::kLong));
    EXPECT_TRUE(at::equal(row, table[id].unsqueeze(0))) << "row " << id;
    hits.push_back(cache.stats().hits > before);
  }
  EXPECT_EQ(cache.cached_rows(), std::min<int64_t>(capacity, rows));
  return hits;
}

int64_t count(const std::vector<bool>& hits) { return std::count(hits.begin(), hits.end(), true); }

TEST(EvictionPolicy, EveryPolicyHitsExactlyWhereItsReferenceModelHits) {
  const std::vector<int64_t> trace = skewed_trace(400, 6000);
  for (const CachePolicy policy :
       {CachePolicy::kSieve, CachePolicy::kS3Fifo, CachePolicy::kLru, CachePolicy::kClock}) {
    const std::vector<bool> hits = cache_outcomes(policy, 40, trace);
    const std::unique_ptr<Model> model = model_of(policy, 40);
    int64_t disagreements = 0;
    for (std::size_t i = 0; i < trace.size(); ++i) {
      const bool expected = model->access(trace[i]);
      if (hits[i] != expected && disagreements++ == 0) {
        ADD_FAILURE() << name_of(policy) << ": access " << i << " (row " << trace[i] << ") was a "
                      << (hits[i] ? "hit" : "miss") << ", the model's a "
                      << (expected ? "hit" : "miss");
      }
    }
    EXPECT_EQ(disagreements, 0) << name_of(policy);
    EXPECT_GT(count(hits), 0) << name_of(policy);
  }
}

TEST(EvictionPolicy, EveryPolicyIsNamedAndTheFrequencyAwareOnesResistScans) {
  for (const char* name : {"sieve", "s3-fifo", "lru", "clock", "degree", "none"}) {
    EXPECT_EQ(name_of(enum_from_name<CachePolicy>("cache_policy", name)), name);
  }
  // Two passes over a hot set of 30 rows, then a scan of 40 rows never seen again, in a cache
  // of 50: LRU loses the hot set to every scan and misses its first pass each round; SIEVE and
  // S3-FIFO keep it, as their papers' scan resistance says.
  std::vector<int64_t> trace;
  for (int round = 0; round < 20; ++round) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t hot = 0; hot < 30; ++hot) trace.push_back(hot);
    }
    for (int64_t cold = 0; cold < 40; ++cold) trace.push_back(1000 + round * 40 + cold);
  }
  std::map<CachePolicy, int64_t> hits;
  for (const CachePolicy policy : {CachePolicy::kSieve, CachePolicy::kS3Fifo, CachePolicy::kLru}) {
    hits[policy] = count(cache_outcomes(policy, 50, trace));
  }
  EXPECT_EQ(hits[CachePolicy::kLru], 20 * 30);  // the second pass of each round
  EXPECT_GT(hits[CachePolicy::kSieve], 1.8 * 20 * 30);
  EXPECT_GT(hits[CachePolicy::kS3Fifo], 1.8 * 20 * 30);
}

}  // namespace
}  // namespace graphloom::features
