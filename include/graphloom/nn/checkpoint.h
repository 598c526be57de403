// Activation checkpointing (torch.utils.checkpoint for the C++ API, which has none): a function
// runs without recording its intermediate activations; backward runs it again, with the random
// state it first saw, and differentiates that recomputation. Deep models trade one extra
// forward per layer for the memory of their activations.
#pragma once

#include <torch/types.h>

#include <functional>
#include <vector>

namespace graphloom::nn {

// `function(input)` whose gradient flows to `input` and to `parameters` (the tensors the
// function reads that need gradients). Without grad mode it is just `function(input)`.
torch::Tensor checkpoint(const std::function<torch::Tensor(const torch::Tensor&)>& function,
                         const torch::Tensor& input, const std::vector<torch::Tensor>& parameters);

}  // namespace graphloom::nn
