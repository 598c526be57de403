// Checkpoint (de)serialization with torch's archives.
#include "graphloom/train/checkpoint.h"

#include <torch/torch.h>

#include "graphloom/base/atomic_output.h"
#include "graphloom/base/error.h"

namespace graphloom::train {

bool TrainState::record_validation(double score, int64_t epoch, torch::nn::Module& model,
                                   int64_t eval_every, int64_t patience) {
  if (score > best_val) {
    best_val = score;
    best_epoch = epoch;
    best_parameters = copy_parameters(model);
    epochs_without_improvement = 0;
    return false;
  }
  epochs_without_improvement += eval_every;
  return patience > 0 && epochs_without_improvement >= patience;
}

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
                     torch::optim::Optimizer& optimizer, const TrainState& state,
                     const torch::Tensor& rng_states) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("epoch", torch::tensor(state.epoch));
  archive.write("batches_done", torch::tensor(state.batches_done));
  archive.write("step", torch::tensor(state.step));
  archive.write("best_val", torch::tensor(state.best_val, torch::kDouble));
  archive.write("best_epoch", torch::tensor(state.best_epoch));
  archive.write("epochs_without_improvement", torch::tensor(state.epochs_without_improvement));
  archive.write("num_best", torch::tensor(static_cast<int64_t>(state.best_parameters.size())));
  for (std::size_t i = 0; i < state.best_parameters.size(); ++i) {
    archive.write("best_" + std::to_string(i), state.best_parameters[i]);
  }
  archive.write("rng_states", rng_states);
  torch::serialize::OutputArchive external_archive;
  for (const auto& [name, tensor] : state.external_state) external_archive.write(name, tensor);
  archive.write("external_state", external_archive);
  // Serialized to memory first: torch's archive writer reports a failed write by throwing
  // from its destructor, which aborts the process. AtomicFile checks every write and syncs.
  std::string bytes;
  try {
    archive.save_to([&bytes](const void* data, std::size_t size) {
      bytes.append(static_cast<const char*>(data), size);
      return size;
    });
  } catch (const c10::Error& e) {
    GL_THROW("cannot write checkpoint '{}': {}", path.string(), e.what_without_backtrace());
  }
  AtomicFile file(path, /*durable=*/true, "checkpoint");
  file.write(bytes.data(), bytes.size());
  file.commit();
}

torch::Tensor load_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
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
    // Each read needs a fresh tensor: reading into one that holds archive storage fails.
    auto read = [&archive](const char* key) {
      torch::Tensor value;
      archive.read(key, value);
      return value;
    };
    state.epoch = read("epoch").item<int64_t>();
    state.batches_done = read("batches_done").item<int64_t>();
    state.step = read("step").item<int64_t>();
    state.best_val = read("best_val").item<double>();
    state.best_epoch = read("best_epoch").item<int64_t>();
    state.epochs_without_improvement = read("epochs_without_improvement").item<int64_t>();
    state.best_parameters.resize(static_cast<std::size_t>(read("num_best").item<int64_t>()));
    for (std::size_t i = 0; i < state.best_parameters.size(); ++i) {
      state.best_parameters[i] = read(("best_" + std::to_string(i)).c_str());
    }
    state.external_state.clear();
    torch::serialize::InputArchive external_archive;
    if (archive.try_read("external_state", external_archive)) {  // absent before 2026-12
      for (const std::string& name : external_archive.keys()) {
        torch::Tensor tensor;
        external_archive.read(name, tensor);
        state.external_state[name] = tensor;
      }
    }
    return read("rng_states");
  } catch (const c10::Error& e) {
    GL_THROW("cannot read checkpoint '{}' (written for another model or corrupt?): {}",
             path.string(), e.what_without_backtrace());
  }
}

}  // namespace graphloom::train
