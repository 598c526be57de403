// LABOR's per-node variates: keyed uniforms, or with batch dependency a rotation between two
// windows' standard normals mapped back to a uniform (as GraphBolt's continuous seeds).
#include "graphloom/sampling/labor.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"

namespace graphloom::sampling {
namespace {

// Marks LABOR's keys apart from the neighbor sampler's per-seed streams, and stands for the
// layer when every layer shares its variates.
constexpr uint64_t kLaborTag = 0x4c41424f52ULL;  // "LABOR"
constexpr uint64_t kEveryLayer = ~uint64_t{0};

}  // namespace

void check_labor_options(const LaborOptions& options) {
  if (options.batch_dependency < 1) {
    throw OptionError("batch_dependency",
                      fmt::format("must be at least 1 (1: new variates every batch), got {}",
                                  options.batch_dependency));
  }
}

LaborVariates labor_variates(uint64_t seed, uint64_t epoch, uint64_t batch, uint64_t layer,
                             const LaborOptions& options) {
  check_labor_options(options);
  const uint64_t layer_part = options.layer_dependency ? kEveryLayer : layer;
  const auto window_key = [&](uint64_t window) {
    return stream_key({kLaborTag, seed, epoch, window, layer_part});
  };
  const auto span = static_cast<uint64_t>(options.batch_dependency);
  LaborVariates variates{.enabled = true, .key = window_key(batch / span)};
  if (span > 1) {
    variates.blend = true;
    variates.next_key = window_key(batch / span + 1);
    variates.mix = static_cast<double>(batch % span) / static_cast<double>(span);
  }
  return variates;
}

double labor_variate(const LaborVariates& variates, int64_t node) {
  RandomStream first(stream_key({variates.key, static_cast<uint64_t>(node)}));
  if (!variates.blend) return first.uniform_real();
  RandomStream second(stream_key({variates.next_key, static_cast<uint64_t>(node)}));
  const double angle = std::numbers::pi / 2 * variates.mix;
  // A unit-norm combination of two independent standard normals is a standard normal.
  const double z = std::cos(angle) * first.normal() + std::sin(angle) * second.normal();
  const double u = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  return u < 1.0 ? u : std::nextafter(1.0, 0.0);
}

}  // namespace graphloom::sampling
