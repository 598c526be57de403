// Evaluation mode for a scope, internal to the train module: inference and evaluation turn
// dropout off and give the model back in the mode it was in, also when they throw.
#pragma once

#include <torch/nn/module.h>

namespace graphloom::train {

class EvalModeScope {
 public:
  explicit EvalModeScope(torch::nn::Module& model)
      : model_(model), was_training_(model.is_training()) {
    model_.eval();
  }
  ~EvalModeScope() { model_.train(was_training_); }
  EvalModeScope(const EvalModeScope&) = delete;
  EvalModeScope& operator=(const EvalModeScope&) = delete;

 private:
  torch::nn::Module& model_;
  bool was_training_;
};

}  // namespace graphloom::train
