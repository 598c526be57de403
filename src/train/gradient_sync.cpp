// Bucketed, overlapped gradient allreduce with Join semantics (see gradient_sync.h).
#include "graphloom/train/gradient_sync.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include "graphloom/base/error.h"
#include "graphloom/base/timer.h"

namespace graphloom::train {

bool data_parallel(const distributed::ProcessGroup* group) {
  return group != nullptr && group->world_size() > 1;
}

bool rank0_decides(bool decision, distributed::ProcessGroup* group) {
  if (!data_parallel(group)) return decision;
  at::Tensor flag = at::full({1}, decision ? 1 : 0, at::kInt);
  group->broadcast(flag, 0);
  return flag.item<int>() != 0;
}

namespace {

// The parameters' one device (buckets are allocated there).
c10::Device parameters_device(const std::vector<at::Tensor>& parameters) {
  GL_CHECK(!parameters.empty(), "data-parallel training needs a model with parameters");
  const c10::Device device = parameters.front().device();
  for (std::size_t p = 1; p < parameters.size(); ++p) {
    GL_CHECK(parameters[p].device() == device,
             "data-parallel training needs every parameter on one device (parameter {} is on "
             "{}, parameter 0 on {})",
             p, parameters[p].device().str(), device.str());
  }
  return device;
}

// Gives the group a backend for `device`'s tensors, as `backend` asks (auto: NCCL on CUDA).
void attach_sync_backend(distributed::ProcessGroup& group, c10::Device device,
                         SyncBackend backend) {
  if (backend == SyncBackend::kAuto) {
    if (!device.is_cuda()) return;  // the group's own Gloo
    backend = SyncBackend::kNccl;
  }
  if (backend == SyncBackend::kNccl && !device.is_cuda()) {
    throw OptionError("dist_backend",
                      fmt::format("nccl reduces CUDA tensors; the model is on {} (use gloo or "
                                  "auto, or a CUDA --device)",
                                  device.str()));
  }
  const auto kind = backend == SyncBackend::kNccl ? distributed::DeviceBackend::kNccl
                                                  : distributed::DeviceBackend::kGloo;
  group.attach_device(device, kind, "dist_backend");
}

}  // namespace

struct GradientSynchronizer::Bucket {
  std::vector<int64_t> parameters;
  at::Tensor buffer;  // gradients back to back, then the weight
  int64_t numel = 0;
  int64_t pending = 0;  // parameters whose gradient has not arrived this round
  bool launched = false;
  distributed::CollectiveWork work;
};

// Runs after a parameter's gradient was accumulated into .grad.
class GradientSynchronizer::ReadyHook : public torch::autograd::FunctionPostHook {
 public:
  ReadyHook(GradientSynchronizer* owner, int64_t parameter)
      : owner_(owner), parameter_(parameter) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list&) override {
    owner_->mark_ready(parameter_);
    return outputs;
  }

 private:
  GradientSynchronizer* owner_;
  int64_t parameter_;
};

GradientSynchronizer::GradientSynchronizer(std::vector<at::Tensor> parameters,
                                           distributed::ProcessGroup& group,
                                           const GradientSyncOptions& options)
    : parameters_(std::move(parameters)), group_(group), options_(options) {
  GL_CHECK(options.bucket_cap_mb > 0, "bucket size must be positive, got {} MB",
           options.bucket_cap_mb);
  const auto cap = static_cast<int64_t>(options.bucket_cap_mb * (1 << 20));
  const c10::Device device = parameters_device(parameters_);
  attach_sync_backend(group_, device, options.backend);
  location_.resize(parameters_.size());
  // Reverse registration order: the last layers' gradients are computed first.
  for (int64_t p = static_cast<int64_t>(parameters_.size()) - 1; p >= 0; --p) {
    const at::Tensor& parameter = parameters_[p];
    GL_CHECK(parameter.scalar_type() == at::kFloat && parameter.requires_grad(),
             "data-parallel training supports float32 parameters with gradients (parameter {})", p);
    if (buckets_.empty() || buckets_.back().numel * 4 >= cap) buckets_.emplace_back();
    Bucket& bucket = buckets_.back();
    location_[p] = {static_cast<int64_t>(buckets_.size()) - 1, bucket.numel};
    bucket.parameters.push_back(p);
    bucket.numel += parameter.numel();
  }
  for (Bucket& bucket : buckets_) {
    bucket.buffer = at::zeros({bucket.numel + 1}, at::TensorOptions(device).dtype(at::kFloat));
    bucket.buffer[bucket.numel].fill_(1.0);  // this rank's weight while it has batches
    bucket.pending = static_cast<int64_t>(bucket.parameters.size());
  }
  ready_.assign(parameters_.size(), false);
  if (!options_.overlap) return;
  for (std::size_t p = 0; p < parameters_.size(); ++p) {
    c10::intrusive_ptr<torch::autograd::Node> accumulator =
        torch::autograd::impl::grad_accumulator(parameters_[p]);
    GL_CHECK(accumulator != nullptr, "parameter {} is not a leaf tensor", p);
    const uintptr_t key =
        accumulator->add_post_hook(std::make_unique<ReadyHook>(this, static_cast<int64_t>(p)));
    hooks_.emplace_back(std::move(accumulator), key);
  }
}

GradientSynchronizer::~GradientSynchronizer() {
  for (auto& [accumulator, key] : hooks_) accumulator->del_post_hook(key);
}

int64_t GradientSynchronizer::num_buckets() const { return static_cast<int64_t>(buckets_.size()); }

std::string GradientSynchronizer::backend_name() const {
  return group_.backend_name(buckets_.front().buffer);
}

void GradientSynchronizer::broadcast_parameters(int root) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> flat;
  for (const at::Tensor& parameter : parameters_) flat.push_back(parameter.detach().reshape(-1));
  at::Tensor all = at::cat(flat);
  group_.broadcast(all, root);
  int64_t offset = 0;
  for (at::Tensor& parameter : parameters_) {
    parameter.detach().view(-1).copy_(all.narrow(0, offset, parameter.numel()));
    offset += parameter.numel();
  }
}

void GradientSynchronizer::mark_ready(int64_t parameter) {
  const auto [b, offset] = location_[parameter];
  Bucket& bucket = buckets_[b];
  GL_CHECK(!bucket.launched && !ready_[parameter],
           "parameter {} received a second gradient before synchronize(): gradient "
           "accumulation over several backward passes is not supported",
           parameter);
  const at::Tensor& grad = parameters_[parameter].grad();
  at::Tensor target = bucket.buffer.narrow(0, offset, parameters_[parameter].numel());
  if (grad.defined()) {
    target.copy_(grad.reshape(-1));
  } else {
    target.zero_();
  }
  ready_[parameter] = true;
  --bucket.pending;
  launch_ready_buckets(/*force=*/false);
}

void GradientSynchronizer::launch_ready_buckets(bool force) {
  while (next_launch_ < num_buckets()) {
    Bucket& bucket = buckets_[next_launch_];
    if (bucket.pending > 0 && !force) return;
    bucket.work = group_.allreduce_async(bucket.buffer);
    bucket.launched = true;
    ++next_launch_;
  }
}

int64_t GradientSynchronizer::synchronize() {
  Timer timer;
  // Gradients whose hook did not run (no overlap, or parameters unused this step) are copied
  // now; those without a gradient contribute zeros.
  for (Bucket& bucket : buckets_) {
    if (bucket.launched) continue;
    for (const int64_t p : bucket.parameters) {
      if (!ready_[p]) mark_ready(p);
    }
  }
  launch_ready_buckets(/*force=*/true);
  const int64_t contributors = finish_round();
  exposed_seconds_ += timer.seconds();
  return contributors;
}

int64_t GradientSynchronizer::join() {
  Timer timer;
  GL_CHECK(next_launch_ == 0, "join() called while a gradient round is in flight");
  for (Bucket& bucket : buckets_) bucket.buffer.zero_();  // zero gradients, weight 0
  launch_ready_buckets(/*force=*/true);
  const int64_t contributors = finish_round();
  exposed_seconds_ += timer.seconds();
  return contributors;
}

int64_t GradientSynchronizer::finish_round() {
  torch::NoGradGuard no_grad;
  int64_t contributors = -1;
  for (Bucket& bucket : buckets_) {
    bucket.work.wait();
    const auto weight =
        static_cast<int64_t>(std::lround(bucket.buffer[bucket.numel].item<float>()));
    GL_CHECK(contributors < 0 || contributors == weight,
             "gradient buckets disagree on the number of contributing ranks ({} vs {})",
             contributors, weight);
    contributors = weight;
    if (weight > 0) bucket.buffer.narrow(0, 0, bucket.numel).div_(static_cast<double>(weight));
    for (const int64_t p : bucket.parameters) {
      at::Tensor& parameter = parameters_[p];
      const at::Tensor reduced =
          bucket.buffer.narrow(0, location_[p].second, parameter.numel()).view(parameter.sizes());
      if (parameter.grad().defined()) {
        parameter.mutable_grad().copy_(reduced);
      } else {
        parameter.mutable_grad() = reduced.clone();
      }
    }
    bucket.pending = static_cast<int64_t>(bucket.parameters.size());
    for (const int64_t p : bucket.parameters) ready_[p] = false;
    bucket.launched = false;
    bucket.buffer[bucket.numel].fill_(1.0);
  }
  next_launch_ = 0;
  return contributors;
}

void GradientSynchronizer::check_parameters_in_sync(int64_t step) {
  // FNV-1a over the bytes of every parameter: equal on all ranks iff (almost surely) bitwise
  // equal. Compared through a min and a max allreduce (of host tensors: the group's Gloo).
  uint64_t hash = 1469598103934665603ULL;
  for (const at::Tensor& parameter : parameters_) {
    const at::Tensor data = parameter.detach().to(at::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(data.data_ptr());
    for (std::size_t i = 0; i < data.nbytes(); ++i) hash = (hash ^ bytes[i]) * 1099511628211ULL;
  }
  at::Tensor low = at::full({1}, static_cast<int64_t>(hash >> 1), at::kLong);
  at::Tensor high = low.clone();
  group_.allreduce(low, distributed::ReduceOp::kMin);
  group_.allreduce(high, distributed::ReduceOp::kMax);
  GL_CHECK(low.item<int64_t>() == high.item<int64_t>(),
           "check_sync_every: model parameters differ across ranks at step {} (rank {} of {}); the "
           "replicas diverged",
           step, group_.rank(), group_.world_size());
}

}  // namespace graphloom::train
