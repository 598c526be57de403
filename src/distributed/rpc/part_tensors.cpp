// A graph server's named node tensors: creation checked against the machine's memory, lookups
// that reach tensors another server of the machine created, and sparse optimizer steps.
#include "part_tensors.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/base/system.h"
#include "graphloom/features/row_codec.h"
#include "rpc_bytes.h"

namespace graphloom::distributed {

PartTensors::PartTensors(const partition::Partition& part, SharedPartition* shared, int64_t part_id)
    : shared_(shared),
      part_id_(part_id),
      node_begin_(part.node_begin),
      num_rows_(part.node_end - part.node_begin) {
  for (const auto& [name, tensor] : part.features) tensors_[name] = tensor;
  for (const auto& [name, scale] : part.feature_scales)
    tensors_[features::row_scale_name(name)] = scale;
  if (part.labels.defined()) tensors_["label"] = part.labels;
  // Temporal trainers pull their seeds' times like labels.
  if (part.node_timestamp.defined()) tensors_["node_timestamp"] = part.node_timestamp;
}

at::Tensor PartTensors::find(const std::string& name) {
  {
    std::shared_lock lock(mutex_);
    if (const auto it = tensors_.find(name); it != tensors_.end()) return it->second;
  }
  at::Tensor found = shared_ != nullptr ? shared_->find_tensor(name) : at::Tensor();
  GL_CHECK(found.defined(), "part {} has no node tensor named '{}'", part_id_, name);
  std::unique_lock lock(mutex_);
  return tensors_.emplace(name, found).first->second;
}

void PartTensors::create(const rpc::CreateTensorRequest& request) {
  const rpc::TensorSchema& schema = request.schema();
  check_tensor_name(schema.name());
  const at::ScalarType dtype = dtype_from_name(schema.dtype());
  const std::vector<int64_t> row_shape(schema.row_shape().begin(), schema.row_shape().end());
  int64_t row_elements = 1;
  for (const int64_t size : row_shape) {
    GL_CHECK(size > 0 && size <= (1 << 20), "tensor '{}': row dimension {} out of range",
             schema.name(), size);
    row_elements *= size;
    GL_CHECK(row_elements <= (1 << 20), "tensor '{}': rows of more than {} elements", schema.name(),
             1 << 20);
  }
  // A table lives as long as the server: it must fit in what the machine has left.
  const int64_t bytes = num_rows_ * row_elements * static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t available = available_memory_bytes();
  if (available > 0 && bytes > available / 2) {
    throw LimitError("tensor size", fmt::format("of '{}' would be {} bytes, more than half the "
                                                "{} bytes of memory this machine has left",
                                                schema.name(), bytes, available));
  }
  std::unique_lock lock(mutex_);
  at::Tensor existing;
  if (const auto it = tensors_.find(schema.name()); it != tensors_.end()) {
    existing = it->second;
  } else if (shared_ != nullptr) {
    existing = shared_->find_tensor(schema.name());  // made by another server here
  }
  if (existing.defined()) {
    GL_CHECK(
        existing.scalar_type() == dtype && existing.sizes().slice(1) == at::IntArrayRef(row_shape),
        "tensor '{}' already exists with another schema", schema.name());
    tensors_[schema.name()] = existing;
    return;
  }
  std::vector<int64_t> shape{num_rows_};
  shape.insert(shape.end(), row_shape.begin(), row_shape.end());
  at::Tensor created = shared_ != nullptr ? shared_->create_tensor(schema.name(), dtype, row_shape)
                                          : at::zeros(shape, at::TensorOptions().dtype(dtype));
  if (request.init_high() > request.init_low()) {
    GL_CHECK(dtype == at::kFloat, "uniform initialisation needs float32, got {}", schema.dtype());
    fill_uniform(created, request.init_low(), request.init_high(), request.init_seed());
  }
  tensors_[schema.name()] = created;
}

void PartTensors::sparse_update(const rpc::SparseUpdateRequest& request, const at::Tensor& local) {
  const std::string& name = request.name();
  at::Tensor weight = find(name);
  GL_CHECK(weight.scalar_type() == at::kFloat && weight.dim() == 2,
           "sparse updates need a float32 [rows, dim] tensor; '{}' is {} with {} dims", name,
           dtype_name(weight.scalar_type()), weight.dim());
  const int64_t dim = weight.size(1);
  const at::Tensor grads = from_bytes(request.grads(), at::kFloat, {dim}, "grads");
  GL_CHECK(grads.size(0) == local.numel(), "sparse update of '{}': {} ids but {} gradient rows",
           name, local.numel(), grads.size(0));
  GL_CHECK(request.lr() > 0 && request.eps() > 0, "learning rate and eps must be positive");
  const std::string& optimizer = request.optimizer();
  GL_CHECK(optimizer == "adagrad" || optimizer == "adam",
           "unknown sparse optimizer '{}' (expected adagrad or adam)", optimizer);
  const bool adam = optimizer == "adam";
  at::Tensor first = find(name + (adam ? "-adam-m" : "-adagrad-sum"));
  at::Tensor second = adam ? find(name + "-adam-v") : at::Tensor();
  at::Tensor steps = adam ? find(name + "-adam-step") : at::Tensor();
  GL_CHECK(first.sizes() == weight.sizes() && (!adam || second.sizes() == weight.sizes()),
           "optimizer state of '{}' does not match its shape", name);
  std::shared_lock tensors(mutex_);  // against pushes; rows are locked one by one
  apply_sparse_step({.optimizer = optimizer,
                     .lr = request.lr(),
                     .eps = request.eps(),
                     .beta1 = request.beta1(),
                     .beta2 = request.beta2()},
                    {.weight = weight.data_ptr<float>(),
                     .first = first.data_ptr<float>(),
                     .second = adam ? second.data_ptr<float>() : nullptr,
                     .steps = adam ? steps.data_ptr<float>() : nullptr,
                     .dim = dim},
                    local.data_ptr<int64_t>(), grads.data_ptr<float>(), local.numel(), row_locks_);
}

void PartTensors::describe(rpc::MetadataResponse& out) {
  std::shared_lock lock(mutex_);
  for (const auto& [name, table] : tensors_) {
    rpc::TensorSchema* schema = out.add_tensors();
    schema->set_name(name);
    schema->set_dtype(dtype_name(table.scalar_type()));
    for (int64_t d = 1; d < table.dim(); ++d) schema->add_row_shape(table.size(d));
  }
}

void PartTensors::fill_uniform(at::Tensor& table, float low, float high, uint64_t seed) const {
  const int64_t rows = table.size(0);
  const int64_t width = table.numel() / std::max<int64_t>(rows, 1);
  float* data = table.data_ptr<float>();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    RandomStream rng(stream_key({seed, static_cast<uint64_t>(node_begin_ + r)}));
    for (int64_t d = 0; d < width; ++d) {
      data[r * width + d] = low + (high - low) * static_cast<float>(rng.uniform_real());
    }
  }
}

}  // namespace graphloom::distributed
