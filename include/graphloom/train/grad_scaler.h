// GradScaler: dynamic loss scaling for fp16 training (torch.amp.GradScaler's algorithm, on
// ATen's own kernels). The loss is multiplied by a scale before backward so that small fp16
// gradients do not flush to zero; before the optimizer step the gradients are divided back and
// checked: a step whose gradients hold an inf or a NaN is skipped and the scale backs off,
// and after `growth_interval` clean steps in a row it grows again.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace graphloom::train {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16, as torch.amp
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class GradScaler {
 public:
  // The scale lives on `device` (the model's), so that no step waits on the host. Throws
  // OptionError for a non-positive scale, a growth factor <= 1, a backoff outside (0, 1) or an
  // interval < 1.
  explicit GradScaler(GradScalerOptions options = {},
                      c10::Device device = c10::Device(c10::DeviceType::CPU));

  // loss * scale.
  at::Tensor scale(const at::Tensor& loss) const;
  // Divides every defined gradient by the scale in place; returns false when one of them holds
  // an inf or a NaN (the caller then skips the optimizer step). Call once per step, after the
  // gradients are synchronized across ranks, so that every rank decides the same.
  bool unscale(const std::vector<at::Tensor>& grads);
  // Backs the scale off after a step that found inf/NaN, or grows it after growth_interval
  // clean steps (at::_amp_update_scale_).
  void update();

  double current_scale() const;
  // Clean steps since the last growth or backoff.
  int64_t growth_tracker() const;
  // Restores the scale and tracker of a checkpoint (resumed training continues them).
  void load(double scale, int64_t growth_tracker);

 private:
  GradScalerOptions options_;
  at::Tensor scale_;           // float32 [1]
  at::Tensor growth_tracker_;  // int32 [1]
  at::Tensor found_inf_;       // float32 [1]: 1 after an unscale that found inf/NaN
};

}  // namespace graphloom::train
