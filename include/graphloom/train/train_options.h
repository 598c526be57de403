// The options of a training run, whatever its task.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graphloom/base/enum_names.h"

#include "graphloom/features/cached_feature_source.h"
#include "graphloom/features/device_rows.h"
#include "graphloom/nn/model_config.h"
#include "graphloom/sampling/labor.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "graphloom/sampling/neighbor_source.h"
#include "graphloom/train/grad_scaler.h"
#include "graphloom/train/gradient_sync.h"

namespace graphloom::train {

enum class TaskKind { kNodeClassification, kLinkPrediction };
// How validation and the test compute logits: layer-wise full-neighbor inference over all
// nodes, or mini-batches sampled with the training fanouts.
enum class EvalMode { kFull, kSampled };
// fp32; bf16 or fp16: autocast of the dense layers on the training device (sparse kernels and
// the loss in float32); fp16 adds dynamic loss scaling (GradScaler).
enum class Precision { kFp32, kBf16, kFp16 };
// Where training batches are sampled: on the host by the C++ kernel, or by the tensor-op
// sampler (sampling::TensorNeighborSource) on the training device, with the graph copied
// there or pinned in host memory. All return the same blocks for the same seed.
enum class GraphPlacement { kCpu, kPinned, kDevice };
// Where a local dataset's "feat" rows are read from: auto (in memory for one trainer per
// machine, memory-mapped for several, which share the page cache), memory, mmap, or disk: read
// from the file on each gather (features::DiskFeatureSource, io_uring and O_DIRECT) for tables
// larger than memory, through a cache of hot rows when TrainOptions::disk_cache asks.
enum class FeatureStorage { kAuto, kMemory, kMmap, kDisk };
// One self-loop per node: added for gcn and gat (as their papers), added, or the graph kept.
enum class SelfLoops { kAuto, kAdd, kKeep };
// The "feat" rows as stored, or each divided by its sum (as the GCN and GAT papers do).
enum class FeatureNormalization { kNone, kRow };
// What a checkpoint that cannot be written (a full disk, an I/O error) does: a loud warning and
// training goes on (the next checkpoint retries; the previous one stays intact), or the run
// stops with the error (exit 1).
enum class CheckpointFailure { kWarn, kStop };

struct TrainOptions {
  nn::ModelConfig model;  // in/out are taken from the dataset
  std::vector<int64_t> fanouts{10, 10, 10};
  // Typed graphs: [layer][edge type] picks overriding `fanouts` (sampling::NeighborSampler).
  std::vector<std::vector<int64_t>> edge_type_fanouts;
  // How training batches pick neighbors: per seed, or LABOR's shared variates (fewer distinct
  // nodes per batch for the same fanouts), with its dependencies.
  sampling::SamplingMethod sampler = sampling::SamplingMethod::kNeighbor;
  sampling::LaborOptions labor;
  // Temporal sampling (node classification, local or partitioned): each seed, at its node time,
  // reaches only the edges usable then (the dataset's node_timestamp and edge_timestamp), in
  // training and in (then sampled) evaluation, picking by `temporal_strategy`.
  bool temporal = false;
  sampling::TemporalStrategy temporal_strategy = sampling::TemporalStrategy::kUniform;
  int64_t batch_size = 1024;
  int64_t epochs = 10;
  double lr = 1e-3;
  double weight_decay = 0;
  int64_t patience = 0;  // stop after this many epochs without a better val acc (0: off)
  EvalMode eval = EvalMode::kFull;
  int64_t eval_every = 1;          // validate every N epochs (the last epoch always)
  int64_t eval_batch_size = 4096;  // destinations per batch of layer-wise inference
  FeatureNormalization normalize_features = FeatureNormalization::kNone;
  SelfLoops self_loops = SelfLoops::kAuto;
  Precision precision = Precision::kFp32;
  GradScalerOptions loss_scaling;  // fp16 only; the scale is checkpointed and resumed
  // Where the model, its optimizer and each batch live: "cpu", "cuda" or "cuda:N" (a CUDA
  // build of graphloom and a GPU). Sampling and feature gathering stay on the CPU; each batch
  // is copied to the device before its step.
  std::string device = "cpu";
  // How the model's input rows reach the device (features::DeviceRows): auto gathers on the
  // CPU into the batch (the loader's gather) unless the device is a GPU and the "feat" matrix is
  // in this process's memory, then device-resident if it takes at most half the free memory,
  // else pinned (zero-copy); cpu, pinned and device force one. pinned and device need the
  // matrix in this process's memory (a local dataset, not remote rows or disk storage);
  // compressed rows go as stored and are decoded on the device.
  features::FeaturePlacement feature_placement = features::FeaturePlacement::kAuto;
  // Bytes of "feat" rows also kept on the device, the nodes of highest out-degree first (the
  // ones sampling reaches most): gathers read them there and the rest by feature_placement.
  // 0: no cache. Needs the matrix in memory, as pinned and device do.
  int64_t device_cache_bytes = 0;
  // device: the training graph's CSC on `device`, sampled there; pinned: sampled there too, the
  // per-edge arrays read in place from pinned host memory (zero-copy), only the per-node ones
  // on the device. Both need the whole graph in this process; neighbor sampling (typed,
  // weighted, temporal) and LABOR without batch dependency.
  GraphPlacement graph_placement = GraphPlacement::kCpu;
  FeatureStorage feature_storage = FeatureStorage::kAuto;
  // feature_storage disk: the cache of "feat" rows in front of the reads (policy and
  // capacity_bytes; kNone: every row from the disk).
  features::CacheOptions disk_cache{.policy = features::CachePolicy::kNone};
  uint64_t seed = 0;
  std::filesystem::path checkpoint;  // written after every epoch (empty: none)
  int64_t checkpoint_every = 0;      // also every this many optimizer steps (0: epochs only)
  bool resume = false;               // continue from `checkpoint`, mid-epoch if it was saved so
  CheckpointFailure on_checkpoint_failure = CheckpointFailure::kWarn;
  std::filesystem::path metrics_log;  // JSON lines, one per epoch (empty: none)
  int num_workers = 1;
  int prefetch = 1;
  int64_t max_batches = 0;  // per epoch, for benchmarks (0: all)
  bool progress = true;
  bool final_test = true;  // evaluate the best model on the test split at the end
  // Data-parallel runs only (a process group is given):
  GradientSyncOptions sync;
  int64_t check_sync_every = 0;     // verify identical parameters every K steps (0: off)
  bool drop_uneven_inputs = false;  // every rank runs the fewest batches any rank has

  // Throws OptionError naming the first field whose value cannot work.
  void validate() const;
  // The training batches' sampler: fanouts, edge-type fanouts, seed, method, LABOR and
  // temporal options (no edge ids: nothing reads them).
  sampling::NeighborSamplerOptions sampler_options() const;
};

struct StageTimes {
  double sample = 0, fetch = 0, wait = 0, forward = 0, backward = 0, optimizer = 0;
  double allreduce = 0;  // gradient sync not hidden behind backward (data-parallel runs)
};

}  // namespace graphloom::train

namespace graphloom {

template <>
struct EnumNames<train::TaskKind> {
  static constexpr std::array<std::pair<std::string_view, train::TaskKind>, 2> kNames{
      {{"node", train::TaskKind::kNodeClassification}, {"link", train::TaskKind::kLinkPrediction}}};
};
template <>
struct EnumNames<train::EvalMode> {
  static constexpr std::array<std::pair<std::string_view, train::EvalMode>, 2> kNames{
      {{"full", train::EvalMode::kFull}, {"sampled", train::EvalMode::kSampled}}};
};
template <>
struct EnumNames<train::Precision> {
  static constexpr std::array<std::pair<std::string_view, train::Precision>, 3> kNames{
      {{"fp32", train::Precision::kFp32},
       {"bf16", train::Precision::kBf16},
       {"fp16", train::Precision::kFp16}}};
};
template <>
struct EnumNames<train::GraphPlacement> {
  static constexpr std::array<std::pair<std::string_view, train::GraphPlacement>, 3> kNames{
      {{"cpu", train::GraphPlacement::kCpu},
       {"pinned", train::GraphPlacement::kPinned},
       {"device", train::GraphPlacement::kDevice}}};
};
template <>
struct EnumNames<train::FeatureStorage> {
  static constexpr std::array<std::pair<std::string_view, train::FeatureStorage>, 4> kNames{
      {{"auto", train::FeatureStorage::kAuto},
       {"memory", train::FeatureStorage::kMemory},
       {"mmap", train::FeatureStorage::kMmap},
       {"disk", train::FeatureStorage::kDisk}}};
};
template <>
struct EnumNames<train::SelfLoops> {
  static constexpr std::array<std::pair<std::string_view, train::SelfLoops>, 3> kNames{
      {{"auto", train::SelfLoops::kAuto},
       {"add", train::SelfLoops::kAdd},
       {"keep", train::SelfLoops::kKeep}}};
};
template <>
struct EnumNames<train::CheckpointFailure> {
  static constexpr std::array<std::pair<std::string_view, train::CheckpointFailure>, 2> kNames{
      {{"warn", train::CheckpointFailure::kWarn}, {"stop", train::CheckpointFailure::kStop}}};
};
template <>
struct EnumNames<train::FeatureNormalization> {
  static constexpr std::array<std::pair<std::string_view, train::FeatureNormalization>, 2> kNames{
      {{"none", train::FeatureNormalization::kNone}, {"row", train::FeatureNormalization::kRow}}};
};

}  // namespace graphloom
