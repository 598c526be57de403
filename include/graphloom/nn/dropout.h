// Dropout with a parallel counter-based mask that is regenerated in backward instead of stored.
// libtorch's CPU dropout draws every element from one locked generator (single-threaded) and
// keeps a float mask as large as its input: on the first layer of a sampled batch
// (hundreds of MB of input rows) that cost more than the layer itself.
#pragma once

#include <torch/nn/module.h>

namespace graphloom::nn {

// Zeroes each element with probability p (resolved to 1/65536) and scales the rest by 1 / (1 - p).
// The mask comes from a key drawn from libtorch's default generator, so torch::manual_seed and
// checkpointed generator states make it reproducible.
at::Tensor fast_dropout(const at::Tensor& x, double p, bool training);

// fast_dropout(relu(x)) (the same mask) in one pass that keeps one bit per element for
// backward: relu would keep its output, and the next layer's input would stay alive through it
// until backward (the largest activation of a sampled batch).
at::Tensor relu_dropout(const at::Tensor& x, double p, bool training);

class FastDropoutImpl : public torch::nn::Module {
 public:
  explicit FastDropoutImpl(double p) : p_(p) {}
  torch::Tensor forward(const torch::Tensor& x) { return fast_dropout(x, p_, is_training()); }
  double p() const { return p_; }

 private:
  double p_;
};
TORCH_MODULE(FastDropout);

}  // namespace graphloom::nn
