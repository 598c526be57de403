// The checkpoint node: forward under no_grad keeps only the input and the generator state;
// backward replays the function with grad mode on and asks autograd for the gradients of the
// input and parameters, which it hands to their nodes in the outer graph (so parameter
// accumulation and its hooks, e.g. gradient bucketing, run as usual).
#include "graphloom/nn/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>

#include <mutex>

#include "graphloom/base/error.h"

namespace graphloom::nn {
namespace {

using torch::autograd::variable_list;

// The default CPU generator's state (dropout keys come from it).
at::Tensor generator_state() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void set_generator_state(const at::Tensor& state) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

class CheckpointBackward : public torch::autograd::Node {
 public:
  CheckpointBackward(std::function<torch::Tensor(const torch::Tensor&)> function,
                     torch::Tensor input, std::vector<torch::Tensor> parameters,
                     at::Tensor random_state)
      : function_(std::move(function)),
        input_(std::move(input)),
        parameters_(std::move(parameters)),
        random_state_(std::move(random_state)),
        autocast_(at::autocast::is_autocast_enabled(at::kCPU)),
        autocast_dtype_(at::autocast::get_autocast_dtype(at::kCPU)) {}

  std::string name() const override { return "CheckpointBackward"; }

  variable_list apply(variable_list&& grads) override {
    GL_CHECK(function_, "a checkpointed function was differentiated twice");
    const at::Tensor resume_state = generator_state();
    set_generator_state(random_state_);
    torch::AutoGradMode grad_mode(true);
    torch::Tensor input = input_.detach().requires_grad_(input_requires_grad_);
    // Autocast is thread-local and off in autograd's threads: replay the forward's setting so
    // the recomputation is the computation that ran.
    const bool resume_autocast = at::autocast::is_autocast_enabled(at::kCPU);
    const at::ScalarType resume_dtype = at::autocast::get_autocast_dtype(at::kCPU);
    at::autocast::set_autocast_dtype(at::kCPU, autocast_dtype_);
    at::autocast::set_autocast_enabled(at::kCPU, autocast_);
    const torch::Tensor output = function_(input);
    at::autocast::set_autocast_enabled(at::kCPU, resume_autocast);
    at::autocast::set_autocast_dtype(at::kCPU, resume_dtype);
    set_generator_state(resume_state);
    // Gradients for the tensors that need them; undefined for the others.
    std::vector<torch::Tensor> wanted;
    if (input_requires_grad_) wanted.push_back(input);
    for (const auto& parameter : parameters_) {
      if (parameter.requires_grad()) wanted.push_back(parameter);
    }
    const variable_list found =
        wanted.empty() ? variable_list{}
                       : torch::autograd::grad({output}, wanted, {grads[0]},
                                               /*retain_graph=*/false, /*create_graph=*/false,
                                               /*allow_unused=*/true);
    variable_list result;
    std::size_t next = 0;
    result.push_back(input_requires_grad_ ? found[next++] : torch::Tensor());
    for (const auto& parameter : parameters_) {
      result.push_back(parameter.requires_grad() ? found[next++] : torch::Tensor());
    }
    release();
    return result;
  }

  void set_input_requires_grad(bool value) { input_requires_grad_ = value; }

 private:
  void release() {
    function_ = nullptr;
    input_ = torch::Tensor();
    parameters_.clear();
  }
  void release_variables() override { release(); }

  std::function<torch::Tensor(const torch::Tensor&)> function_;
  torch::Tensor input_;
  std::vector<torch::Tensor> parameters_;
  at::Tensor random_state_;
  bool autocast_;
  at::ScalarType autocast_dtype_;
  bool input_requires_grad_ = false;
};

}  // namespace

torch::Tensor checkpoint(const std::function<torch::Tensor(const torch::Tensor&)>& function,
                         const torch::Tensor& input, const std::vector<torch::Tensor>& parameters) {
  bool needs_grad = input.requires_grad();
  for (const auto& parameter : parameters) needs_grad = needs_grad || parameter.requires_grad();
  if (!torch::GradMode::is_enabled() || !needs_grad) return function(input);
  const at::Tensor random_state = generator_state();
  torch::Tensor output;
  {
    torch::NoGradGuard no_grad;
    output = function(input.detach());
  }
  auto node =
      c10::make_intrusive<CheckpointBackward>(function, input.detach(), parameters, random_state);
  node->set_input_requires_grad(input.requires_grad());
  std::vector<torch::Tensor> inputs{input};
  inputs.insert(inputs.end(), parameters.begin(), parameters.end());
  node->set_next_edges(torch::autograd::collect_next_edges(at::ArrayRef<torch::Tensor>(inputs)));
  torch::autograd::create_gradient_edge(output, node);
  return output;
}

}  // namespace graphloom::nn
