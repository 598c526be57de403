// Data-parallel gradient averaging (what DDP's Reducer does): parameters are grouped into
// buckets in reverse registration order (the order backward produces their gradients); a hook
// on each parameter's gradient accumulator copies the gradient into its bucket and launches the
// bucket's allreduce as soon as the bucket is full, so communication overlaps the rest of
// backward. Buckets are launched strictly in order, so every rank issues the same collectives.
//
// Uneven inputs (Join): every bucket carries one extra element, the rank's weight (1 for a rank
// that trained on a batch, 0 for one that ran out). After the allreduce each gradient is divided
// by the summed weight, so a joined rank shadows the step with zero gradients and zero weight,
// receives the same averaged gradients and keeps its parameters identical. A round whose summed
// weight is 0 means every rank is done.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/intrusive_ptr.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graphloom/base/enum_names.h"
#include "graphloom/distributed/runtime/process_group.h"

namespace torch::autograd {
struct Node;
}  // namespace torch::autograd

namespace graphloom::train {

// The backend of the gradient buckets, which live on the parameters' device: auto is NCCL for
// a CUDA device (what DDP uses) and the group's Gloo for the CPU; nccl needs a CUDA device and
// build; gloo is a Gloo group of the buckets' own (Gloo reduces CUDA tensors through the host).
enum class SyncBackend { kAuto, kNccl, kGloo };

struct GradientSyncOptions {
  double bucket_cap_mb = 1.0;  // gradient bytes per allreduce bucket
  bool overlap = true;         // launch buckets from backward hooks (false: all after backward)
  SyncBackend backend = SyncBackend::kAuto;
};

// True for a process group of more than one rank (a data-parallel run).
bool data_parallel(const distributed::ProcessGroup* group);

// Rank 0's `decision` on every rank (e.g. early stopping), so that no rank leaves a loop alone
// and hangs the others; `decision` itself when not data-parallel.
bool rank0_decides(bool decision, distributed::ProcessGroup* group);

class GradientSynchronizer {
 public:
  GradientSynchronizer(std::vector<at::Tensor> parameters, distributed::ProcessGroup& group,
                       const GradientSyncOptions& options = {});
  ~GradientSynchronizer();
  GradientSynchronizer(const GradientSynchronizer&) = delete;
  GradientSynchronizer& operator=(const GradientSynchronizer&) = delete;

  // Copies rank `root`'s parameter values to every rank.
  void broadcast_parameters(int root = 0);
  // After loss.backward() on a rank that trained on a batch: reduces every bucket and leaves in
  // each parameter's grad the mean over the ranks that contributed. Returns their count.
  int64_t synchronize();
  // On a rank out of batches: one shadow round with zero gradients and weight 0; grads then hold
  // the others' mean. Returns how many ranks contributed: 0 means every rank is done.
  int64_t join();
  // Throws graphloom::Error when the parameters are not bitwise identical on every rank.
  void check_parameters_in_sync(int64_t step);

  int64_t num_buckets() const;
  // "gloo", "nccl" or "gloo (device)": what the buckets are reduced through.
  std::string backend_name() const;
  // Seconds spent in synchronize()/join() (waiting for allreduces not hidden behind backward).
  double exposed_seconds() const { return exposed_seconds_; }
  void reset_exposed_seconds() { exposed_seconds_ = 0; }

 private:
  struct Bucket;
  class ReadyHook;
  void mark_ready(int64_t parameter);
  void launch_ready_buckets(bool force);
  int64_t finish_round();

  std::vector<at::Tensor> parameters_;
  distributed::ProcessGroup& group_;
  GradientSyncOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<int64_t, int64_t>> location_;  // parameter -> (bucket, offset)
  std::vector<bool> ready_;  // parameter's gradient is in its bucket this round
  int64_t next_launch_ = 0;
  double exposed_seconds_ = 0;
  // Each parameter's gradient accumulator (kept alive: the parameter holds it weakly) and the
  // key of the hook installed on it.
  std::vector<std::pair<c10::intrusive_ptr<torch::autograd::Node>, uintptr_t>> hooks_;
};

}  // namespace graphloom::train

namespace graphloom {

template <>
struct EnumNames<train::SyncBackend> {
  static constexpr std::array<std::pair<std::string_view, train::SyncBackend>, 3> kNames{
      {{"auto", train::SyncBackend::kAuto},
       {"nccl", train::SyncBackend::kNccl},
       {"gloo", train::SyncBackend::kGloo}}};
};

}  // namespace graphloom
