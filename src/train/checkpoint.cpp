// Checkpoint (de)serialization with torch's archives.
#include "graphloom/train/checkpoint.h"

#include <torch/torch.h>

#include "graphloom/base/atomic_output.h"
#include "graphloom/base/error.h"

namespace graphloom::train {

std::vector<torch::Tensor> copy_parameters(torch::nn::Module& model) {
  std::vector<torch::Tensor> copies;
  for (const auto& p : model.parameters()) copies.push_back(p.detach().clone());
  return copies;
}

void restore_parameters(torch::nn::Module& model, const std::vector<torch::Tensor>& saved) {
  torch::NoGradGuard no_grad;
  auto params = model.parameters();
  GL_CHECK(params.size() == saved.size(), "cannot restore {} parameters into a model with {}",
           saved.size(), params.size());
  for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(saved[i]);
}

void save_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, const TrainState& state) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("epoch", torch::tensor(state.epoch));
  archive.write("best_val", torch::tensor(state.best_val, torch::kDouble));
  archive.write("best_epoch", torch::tensor(state.best_epoch));
  archive.write("epochs_without_improvement", torch::tensor(state.epochs_without_improvement));
  archive.write("num_best", torch::tensor(static_cast<int64_t>(state.best_parameters.size())));
  for (std::size_t i = 0; i < state.best_parameters.size(); ++i) {
    archive.write("best_" + std::to_string(i), state.best_parameters[i]);
  }
  archive.write("rng_state", at::detail::getDefaultCPUGenerator().get_state());
  const std::filesystem::path temporary = temporary_sibling(path);
  try {
    archive.save_to(temporary.string());
  } catch (const c10::Error& e) {
    std::filesystem::remove(temporary);
    GL_THROW("cannot write checkpoint '{}': {}", path.string(), e.what_without_backtrace());
  }
  std::filesystem::rename(temporary, path);
}

void load_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, TrainState& state) {
  GL_CHECK(std::filesystem::exists(path), "checkpoint '{}' does not exist", path.string());
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path.string());
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model.load(model_archive);
    torch::serialize::InputArchive optimizer_archive;
    archive.read("optimizer", optimizer_archive);
    optimizer.load(optimizer_archive);
    torch::Tensor value;
    archive.read("epoch", value);
    state.epoch = value.item<int64_t>();
    archive.read("best_val", value);
    state.best_val = value.item<double>();
    archive.read("best_epoch", value);
    state.best_epoch = value.item<int64_t>();
    archive.read("epochs_without_improvement", value);
    state.epochs_without_improvement = value.item<int64_t>();
    archive.read("num_best", value);
    state.best_parameters.resize(static_cast<std::size_t>(value.item<int64_t>()));
    for (std::size_t i = 0; i < state.best_parameters.size(); ++i) {
      archive.read("best_" + std::to_string(i), state.best_parameters[i]);
    }
    archive.read("rng_state", value);
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(value);
  } catch (const c10::Error& e) {
    GL_THROW("cannot read checkpoint '{}' (written for another model or corrupt?): {}",
             path.string(), e.what_without_backtrace());
  }
}

}  // namespace graphloom::train
