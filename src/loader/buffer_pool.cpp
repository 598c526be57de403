// A buffer is free when the pool holds the only reference to its storage: every batch view
// (and anything autograd saved from it) has been released.
#include "graphloom/loader/buffer_pool.h"

#include <ATen/ATen.h>

namespace graphloom::loader {
namespace {

bool fits(const at::Tensor& buffer, c10::ScalarType dtype, const std::vector<int64_t>& row_shape,
          int64_t rows) {
  return buffer.scalar_type() == dtype && buffer.sizes().slice(1).vec() == row_shape &&
         buffer.size(0) >= rows;
}

}  // namespace

at::Tensor BufferPool::take(const std::string& name, c10::ScalarType dtype,
                            const std::vector<int64_t>& row_shape, int64_t rows) {
  std::lock_guard lock(mutex_);
  std::vector<at::Tensor>& buffers = buffers_[name];
  at::Tensor* free_slot = nullptr;
  for (at::Tensor& buffer : buffers) {
    if (buffer.storage().use_count() != 1) continue;  // a batch still uses it
    if (fits(buffer, dtype, row_shape, rows)) return buffer.narrow(0, 0, rows);
    free_slot = &buffer;
  }
  const auto options = at::TensorOptions(dtype).pinned_memory(pinned_);
  std::vector<int64_t> shape{rows + rows / 8};
  shape.insert(shape.end(), row_shape.begin(), row_shape.end());
  if (free_slot != nullptr) {
    *free_slot = at::Tensor();  // release the small buffer before allocating its successor
    *free_slot = at::empty(shape, options);
    return free_slot->narrow(0, 0, rows);
  }
  if (buffers.size() < max_buffers_) {
    buffers.push_back(at::empty(shape, options));
    return buffers.back().narrow(0, 0, rows);
  }
  shape[0] = rows;
  return at::empty(shape, options);
}

std::size_t BufferPool::num_buffers(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = buffers_.find(name);
  return it == buffers_.end() ? 0 : it->second.size();
}

}  // namespace graphloom::loader
