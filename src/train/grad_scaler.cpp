// GradScaler (grad_scaler.h) on ATen's AMP kernels, which exist for the CPU and for CUDA: the
// same code scales fp16 training on either device.
#include "graphloom/train/grad_scaler.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>

#include "graphloom/base/error.h"

namespace graphloom::train {

GradScaler::GradScaler(GradScalerOptions options, c10::Device device) : options_(options) {
  if (!(options_.init_scale > 0))
    throw OptionError("init_scale", fmt::format("must be > 0, got {}", options_.init_scale));
  if (!(options_.growth_factor > 1))
    throw OptionError("growth_factor", fmt::format("must be > 1, got {}", options_.growth_factor));
  if (!(options_.backoff_factor > 0 && options_.backoff_factor < 1))
    throw OptionError("backoff_factor",
                      fmt::format("must be in (0, 1), got {}", options_.backoff_factor));
  if (options_.growth_interval < 1)
    throw OptionError("growth_interval",
                      fmt::format("must be >= 1, got {}", options_.growth_interval));
  const auto on_device = at::TensorOptions().device(device);
  scale_ = at::full({1}, options_.init_scale, on_device.dtype(at::kFloat));
  growth_tracker_ = at::zeros({1}, on_device.dtype(at::kInt));
  found_inf_ = at::zeros({1}, on_device.dtype(at::kFloat));
}

at::Tensor GradScaler::scale(const at::Tensor& loss) const {
  return loss * scale_.to(loss.device());
}

bool GradScaler::unscale(const std::vector<at::Tensor>& grads) {
  found_inf_.zero_();
  // The kernel takes one device and dtype per call: grouped as torch.amp groups them.
  std::vector<std::vector<at::Tensor>> groups;
  for (const at::Tensor& grad : grads) {
    if (!grad.defined()) continue;
    auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& group) {
      return group.front().device() == grad.device() &&
             group.front().scalar_type() == grad.scalar_type();
    });
    if (same == groups.end()) {
      groups.push_back({grad});
    } else {
      same->push_back(grad);
    }
  }
  const at::Tensor inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  for (std::vector<at::Tensor>& group : groups) {
    const c10::Device device = group.front().device();
    at::Tensor found = at::zeros({1}, found_inf_.options().device(device));
    at::_amp_foreach_non_finite_check_and_unscale_(group, found, inv_scale.to(device));
    found_inf_.add_(found.to(found_inf_.device()));
  }
  found_inf_.clamp_max_(1);
  return found_inf_.item<float>() == 0;
}

void GradScaler::update() {
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                         options_.backoff_factor, options_.growth_interval);
  found_inf_.zero_();
}

double GradScaler::current_scale() const { return scale_.item<double>(); }

int64_t GradScaler::growth_tracker() const { return growth_tracker_.item<int64_t>(); }

void GradScaler::load(double scale, int64_t growth_tracker) {
  GL_CHECK(scale > 0, "grad scaler state: scale must be > 0, got {}", scale);
  scale_.fill_(scale);
  growth_tracker_.fill_(growth_tracker);
}

}  // namespace graphloom::train
