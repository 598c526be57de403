// The trainers' collective communication: c10d ProcessGroupGloo over a rendezvous store that
// rank 0 hosts on MASTER_ADDR:MASTER_PORT only, checking the job's token (torchrun's own
// TCPStore when its agent hosts one). Gradient allreduce, parameter broadcast,
// barriers, metric reduces and the shared-memory outputs of distributed inference go through it.
// Every failure (a dead peer, a timeout, a port in use) becomes a graphloom::Error that says
// which operation failed and why, never a hang: every operation has the group's timeout.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "graphloom/distributed/runtime/process_environment.h"

namespace graphloom::distributed {

// A collective running in the background; wait() blocks until it is done (or throws).
class CollectiveWork {
 public:
  CollectiveWork() = default;
  explicit CollectiveWork(std::function<void()> wait) : wait_(std::move(wait)) {}
  void wait() {
    if (wait_) std::exchange(wait_, nullptr)();
  }

 private:
  std::function<void()> wait_;
};

struct ProcessGroupOptions {
  // Bound on the rendezvous and on every collective: a peer that died or hangs is reported
  // within this time. Peers that exit close their sockets, which is reported at once.
  std::chrono::milliseconds timeout = std::chrono::seconds(120);
  int gloo_threads = 2;  // background threads running collectives
  // The job's rendezvous token: rank 0's store refuses calls without it (empty: accepts all,
  // with a warning). Not used when torchrun's agent hosts the store.
  std::string token;
};

enum class ReduceOp { kSum, kMin, kMax };

// The backend of the collectives on a training device's tensors (ProcessGroup::attach_device).
enum class DeviceBackend { kNccl, kGloo };

class ProcessGroup {
 public:
  // Joins the group described by `env` (rank 0 creates the store). Throws with the address
  // when the port is in use or rank 0 cannot be reached within the timeout.
  static std::unique_ptr<ProcessGroup> connect(const ProcessEnvironment& env,
                                               const ProcessGroupOptions& options = {});
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  const ProcessEnvironment& environment() const { return env_; }
  // True when every rank runs on this machine (same host name): shared memory reaches all.
  bool single_host() const { return single_host_; }
  // The same string on every rank, different for every job: names shared resources.
  const std::string& job_id() const { return job_id_; }

  // In place on every rank; all ranks must issue the same collectives in the same order.
  void allreduce(at::Tensor& tensor, ReduceOp op = ReduceOp::kSum);
  CollectiveWork allreduce_async(at::Tensor tensor);  // sum
  void broadcast(at::Tensor& tensor, int root = 0);
  void barrier();

  // Sends every later collective on `device`'s tensors through a backend of their own,
  // connected here (collective: every rank calls it with the same arguments): NCCL, as DDP does
  // on GPUs, or a second Gloo group over the same store (on the CPU it stands in for NCCL in
  // tests). Barriers and tensors on other devices keep the group's Gloo. `option` names the
  // setting in messages (NCCL in a build without CUDA is an OptionError). Attaching the same
  // again does nothing; another device or backend is an Error.
  void attach_device(c10::Device device, DeviceBackend backend, const std::string& option);
  // "gloo", or "nccl" / "gloo (device)" for a tensor on the attached device.
  std::string backend_name(const at::Tensor& tensor) const;

  // A tensor backed by one shared-memory segment that every rank maps (single_host() only).
  // The segment's name is removed as soon as all ranks mapped it, so nothing is left in
  // shared memory whatever happens next. Collective: every rank calls it with the same arguments.
  at::Tensor shared_tensor(const std::string& tag, at::IntArrayRef sizes, at::ScalarType dtype);

 private:
  struct Impl;
  explicit ProcessGroup(ProcessEnvironment env);
  ProcessEnvironment env_;
  std::unique_ptr<Impl> impl_;
  bool single_host_ = true;
  std::string job_id_;
};

// The contiguous share [begin, end) of `count` items that `rank` of `world_size` handles.
std::pair<int64_t, int64_t> rank_share(int64_t count, int rank, int world_size);

// A TCP port on `host` that nothing listens on right now (for local launches and tests).
int find_free_port(const std::string& host = "127.0.0.1");

}  // namespace graphloom::distributed
