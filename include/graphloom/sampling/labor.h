// LABOR, layer-neighbor sampling (Balin & Catalyurek, NeurIPS 2023; GraphBolt's
// LayerNeighborSampler): every candidate neighbor t of a sampling call draws one variate u_t,
// shared by all the seeds that reach it, and seed s of degree d keeps t when u_t < fanout / d.
// Each seed still keeps `fanout` neighbors in expectation (Poisson sampling), but seeds with
// common neighbors keep the same ones, so a batch reaches far fewer distinct nodes.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

#include "graphloom/base/enum_names.h"
#include "graphloom/base/random.h"

namespace graphloom::sampling {

// The variates of one sampling call: u_t is a pure function of (key, t), so LABOR gives the
// same picks at any thread count and on every partition (t is a global node id).
struct LaborVariates {
  bool enabled = false;
  uint64_t key = 0;
  // Batch dependency: u_t = Phi(cos(pi/2 mix) z_t(key) + sin(pi/2 mix) z_t(next_key)) with
  // standard normals z, so consecutive batches' variates move slowly from one window's to the
  // next and stay uniform. Off: u_t is key's uniform draw.
  bool blend = false;
  uint64_t next_key = 0;
  double mix = 0;  // position in the window, in [0, 1)
};

// How a NeighborSampler picks neighbors.
enum class SamplingMethod {
  kNeighbor,  // each seed draws its own `fanout` neighbors (DGL's NeighborSampler)
  kLabor,     // LABOR-0: shared per-node variates (GraphBolt's LayerNeighborSampler)
};

// The most LABOR-* rounds (LaborOptions::importance_sampling), and those run when it is
// negative (until the expected number of nodes stops falling): they settle within a handful.
inline constexpr int64_t kMaxImportanceRounds = 100;

struct LaborOptions {
  // The same variates in every layer: a node reached in several layers is kept by all of them.
  bool layer_dependency = false;
  // Variates that change slowly over this many consecutive batches (1: new ones every batch),
  // so that consecutive batches reach overlapping nodes and a feature cache hits more.
  int64_t batch_dependency = 1;
  // LABOR-*: this many rounds of the paper's importance-sampling optimization (section 3.3;
  // GraphBolt's importance_sampling), which raises the probability of neighbors that many
  // seeds share and lowers the rest's, so a batch reaches fewer distinct nodes still. 0:
  // LABOR-0; negative: rounds until the expected number of nodes stops falling. The sampled
  // edges then carry importance weights (Block::edge_weights) that the models' mean
  // aggregations apply.
  int64_t importance_sampling = 0;
};

// The variates of `layer` in batch `batch` of `epoch` for a sampler seeded with `seed`.
LaborVariates labor_variates(uint64_t seed, uint64_t epoch, uint64_t batch, uint64_t layer,
                             const LaborOptions& options);

// With batch dependency: the blend of the two windows' normals, mapped back to [0, 1).
double blended_labor_variate(const LaborVariates& variates, int64_t node);

// The hash of node t under a key is SplitMix64's t-th output for that key: one mix per
// candidate edge, where a seeded stream would take eight.
inline constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// u_t in [0, 1) for the global node id `node`. Evaluated once per candidate edge, so the
// plain case is inline.
inline double labor_variate(const LaborVariates& variates, int64_t node) {
  if (variates.blend) return blended_labor_variate(variates, node);
  const uint64_t bits = mix64(variates.key + static_cast<uint64_t>(node) * kGolden);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// LABOR-0's test for one column, u_t * degree < fanout, made once per column: each neighbor then
// costs a hash and an integer compare. Keeps exactly the neighbors the test in doubles keeps.
class LaborCut {
 public:
  LaborCut(const LaborVariates& variates, int64_t fanout, int64_t degree);
  bool keeps(int64_t node) const {
    if (variates_->blend) {
      return labor_variate(*variates_, node) * static_cast<double>(degree_) <
             static_cast<double>(fanout_);
    }
    // u_t is (bits >> 11) * 2^-53: below the cut exactly where the test in doubles passes.
    return (mix64(variates_->key + static_cast<uint64_t>(node) * kGolden) >> 11) < bound_;
  }

 private:
  friend void mark_kept(const LaborCut& cut, const int32_t* nodes, int64_t n, uint8_t* kept);
  friend void mark_kept(const LaborCut& cut, const int64_t* nodes, int64_t n, uint8_t* kept);

  const LaborVariates* variates_;
  int64_t fanout_;
  int64_t degree_;
  uint64_t bound_;  // labor_keep_bound(fanout, degree)
};

// kept[j] = cut.keeps(nodes[j]) for j < n: one pass of hashes and compares, which hosts with
// 64-bit vector multiplies (AVX-512DQ) run eight nodes at a time.
void mark_kept(const LaborCut& cut, const int32_t* nodes, int64_t n, uint8_t* kept);
void mark_kept(const LaborCut& cut, const int64_t* nodes, int64_t n, uint8_t* kept);

// The least k in [0, 2^53] whose variate u = k * 2^-53 fails u * degree < fanout, evaluated in
// doubles as labor_variate's callers did (2^53: every u passes). fanout >= 0, degree > 0.
uint64_t labor_keep_bound(int64_t fanout, int64_t degree);

// Throws OptionError("batch_dependency") unless it is at least 1, and
// OptionError("importance_sampling") above kMaxImportanceRounds.
void check_labor_options(const LaborOptions& options);

}  // namespace graphloom::sampling

namespace graphloom {

template <>
struct EnumNames<sampling::SamplingMethod> {
  static constexpr std::array<std::pair<std::string_view, sampling::SamplingMethod>, 2> kNames{
      {{"neighbor", sampling::SamplingMethod::kNeighbor},
       {"labor", sampling::SamplingMethod::kLabor}}};
};

}  // namespace graphloom
