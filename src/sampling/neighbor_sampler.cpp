// Multi-layer sampling: sample one hop from the current frontier, relabel the picks into a
// Block, and make the block's sources the next frontier.
#include "graphloom/sampling/neighbor_sampler.h"

#include <ATen/ATen.h>

#include <fmt/ranges.h>

#include <limits>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/sampling/labor_importance.h"
#include "sampling_limits.h"

namespace graphloom::sampling {

void check_fanouts(const std::vector<int64_t>& fanouts) {
  if (fanouts.empty()) throw OptionError("fanouts", "must name at least one layer (e.g. 10,10,10)");
  for (const int64_t fanout : fanouts) {
    if (fanout == -1 || fanout > 0) continue;
    throw OptionError("fanouts", fmt::format("must be positive or -1 (all neighbors), got {}",
                                             fmt::join(fanouts, ",")));
  }
}

NeighborSampler::NeighborSampler(const NeighborSource* source, NeighborSamplerOptions options)
    : source_(source), options_(std::move(options)) {
  GL_CHECK(source_ != nullptr, "NeighborSampler needs a neighbor source");
  check_fanouts(options_.fanouts);
  for (const int64_t fanout : options_.fanouts) check_fanout(fanout, options_.replace, "fanouts");
  GL_CHECK(options_.edge_type_fanouts.empty() ||
               options_.edge_type_fanouts.size() == options_.fanouts.size(),
           "per-edge-type fanouts name {} layers but fanouts name {}",
           options_.edge_type_fanouts.size(), options_.fanouts.size());
  if (options_.method != SamplingMethod::kLabor && options_.labor.importance_sampling != 0) {
    throw OptionError("importance_sampling",
                      "LABOR-*'s importance sampling needs the labor sampler (--sampler labor)");
  }
  if (options_.method == SamplingMethod::kLabor) {
    check_labor_options(options_.labor);
    check_labor_request(
        {.replace = options_.replace, .weighted = options_.weighted, .labor = {.enabled = true}});
  }
  GL_CHECK(source_->num_nodes() < std::numeric_limits<int32_t>::max(),
           "the sampler's local id table holds fewer than 2^31 nodes; got {}",
           source_->num_nodes());
}

std::unique_ptr<RelabelWorkspace> NeighborSampler::acquire_workspace() const {
  {
    std::lock_guard lock(pool_mutex_);
    if (!pool_.empty()) {
      auto workspace = std::move(pool_.back());
      pool_.pop_back();
      return workspace;
    }
  }
  return std::make_unique<RelabelWorkspace>(source_->num_nodes());
}

void NeighborSampler::release_workspace(std::unique_ptr<RelabelWorkspace> workspace) const {
  std::lock_guard lock(pool_mutex_);
  pool_.push_back(std::move(workspace));
}

std::vector<std::vector<int64_t>> per_edge_type_fanouts(const graph::GraphSchema& schema,
                                                        const std::vector<int64_t>& fanouts,
                                                        const std::vector<std::string>& overrides) {
  GL_CHECK(!schema.edge_types.empty() || overrides.empty(),
           "per-edge-type fanouts ({}) need a typed graph, but the graph has no edge types",
           overrides.front());
  std::vector<std::vector<int64_t>> result(
      fanouts.size(), std::vector<int64_t>(static_cast<std::size_t>(schema.num_edge_types())));
  for (std::size_t layer = 0; layer < fanouts.size(); ++layer) {
    std::fill(result[layer].begin(), result[layer].end(), fanouts[layer]);
  }
  for (const std::string& spec : overrides) {
    const auto equals = spec.find('=');
    GL_CHECK(equals != std::string::npos && equals > 0,
             "edge-type fanout '{}' must read EDGE_TYPE=F1,F2,... (one fanout per layer)", spec);
    const int64_t type = schema.edge_type_id(spec.substr(0, equals));
    std::vector<int64_t> values;
    std::size_t begin = equals + 1;
    while (begin <= spec.size()) {
      const std::size_t end = std::min(spec.find(',', begin), spec.size());
      const std::string item = spec.substr(begin, end - begin);
      std::size_t used = 0;
      int64_t value = 0;
      try {
        value = std::stoll(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      GL_CHECK(used == item.size() && !item.empty() && value >= -1,
               "edge-type fanout '{}': '{}' is not a fanout (-1 or a non-negative integer)", spec,
               item);
      values.push_back(value);
      begin = end + 1;
    }
    GL_CHECK(values.size() == fanouts.size(),
             "edge-type fanout '{}' names {} layers but --fanouts names {}", spec, values.size(),
             fanouts.size());
    for (std::size_t layer = 0; layer < fanouts.size(); ++layer) {
      result[layer][static_cast<std::size_t>(type)] = values[layer];
    }
  }
  return result;
}

MiniBatch NeighborSampler::sample(const at::Tensor& seeds, uint64_t epoch, uint64_t batch) const {
  return sample(seeds, at::Tensor(), epoch, batch);
}

MiniBatch NeighborSampler::sample(const at::Tensor& seeds, const at::Tensor& seed_times,
                                  uint64_t epoch, uint64_t batch) const {
  GL_CHECK(seeds.scalar_type() == at::kLong && seeds.dim() == 1,
           "seeds must be a 1-D int64 tensor");
  if (seed_times.defined() &&
      (seed_times.scalar_type() != at::kLong || seed_times.sizes() != seeds.sizes())) {
    throw OptionError("seed_times",
                      fmt::format("must be an int64 tensor of one time per seed "
                                  "({}), got {} of shape [{}]",
                                  seeds.numel(), c10::toString(seed_times.scalar_type()),
                                  fmt::join(seed_times.sizes(), ", ")));
  }
  MiniBatch result;
  result.index = static_cast<int64_t>(batch);
  result.seeds = seeds.contiguous();
  if (seed_times.defined()) result.seed_times = seed_times.contiguous();
  const int64_t layers = num_layers();
  result.blocks.resize(static_cast<std::size_t>(layers));

  auto workspace = acquire_workspace();
  struct Release {
    const NeighborSampler* sampler;
    std::unique_ptr<RelabelWorkspace>& workspace;
    ~Release() { sampler->release_workspace(std::move(workspace)); }
  } release{this, workspace};

  at::Tensor frontier = result.seeds;
  at::Tensor frontier_times = result.seed_times;
  int64_t sampled_before = 0;  // the frontier's head, sampled at an earlier hop (each_node_once)
  for (int64_t layer = layers - 1; layer >= 0; --layer) {
    SampleOptions options{
        .replace = options_.replace,
        .weighted = options_.weighted,
        .direction = options_.direction,
        .random_key = stream_key({options_.seed, epoch, batch, static_cast<uint64_t>(layer)}),
        .edge_ids = options_.edge_ids};
    if (options_.method == SamplingMethod::kLabor) {
      options.labor =
          labor_variates(options_.seed, epoch, batch, static_cast<uint64_t>(layer), options_.labor);
    }
    if (!options_.edge_type_fanouts.empty()) {
      options.edge_type_fanouts = options_.edge_type_fanouts[static_cast<std::size_t>(layer)];
    }
    if (frontier_times.defined()) {
      options.seed_times =
          frontier_times.narrow(0, sampled_before, frontier.numel() - sampled_before);
      options.temporal_strategy = options_.temporal_strategy;
    }
    const at::Tensor to_sample =
        frontier.narrow(0, sampled_before, frontier.numel() - sampled_before);
    const int64_t fanout = options_.fanouts[static_cast<std::size_t>(layer)];
    SampledEdges picks =
        options_.method == SamplingMethod::kLabor && options_.labor.importance_sampling != 0
            ? sample_labor_importance(*source_, to_sample, fanout, options,
                                      options_.labor.importance_sampling)
            : source_->sample_neighbors(to_sample, fanout, options);
    if (sampled_before > 0) {  // the head's columns are empty
      picks.indptr = at::cat({at::zeros({sampled_before}, picks.indptr.options()), picks.indptr});
    }
    Relabeled relabeled;
    if (frontier_times.defined()) {  // each pick at its destination's time
      // The first hop's times come from the caller (the host) when a device samples.
      frontier_times = frontier_times.to(picks.indptr.device());
      const at::Tensor pick_times = at::repeat_interleave(
          frontier_times, picks.indptr.slice(0, 1) - picks.indptr.slice(0, 0, -1));
      relabeled = relabel_timed(frontier, frontier_times, picks.neighbors, pick_times);
    } else {
      relabeled = relabel(frontier, picks.neighbors, *workspace);
    }
    Block& block = result.blocks[static_cast<std::size_t>(layer)];
    block.src_ids = relabeled.src_ids;
    block.src_times = relabeled.src_times;
    frontier_times = relabeled.src_times;
    block.num_dst = frontier.numel();
    block.indptr = picks.indptr;
    block.indices = relabeled.indices;
    if (options_.edge_ids) block.edge_ids = picks.edge_ids;
    block.edge_types = picks.edge_types;
    block.edge_weights = picks.weights;
    frontier = block.src_ids;
    if (options_.each_node_once) sampled_before = block.num_dst;
  }
  return result;
}

}  // namespace graphloom::sampling
