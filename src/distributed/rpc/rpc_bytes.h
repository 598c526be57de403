// Tensors to and from the raw little-endian `bytes` fields of the graph service.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "graphloom/base/error.h"

namespace graphloom::distributed {

inline std::string to_bytes(const at::Tensor& tensor) {
  const at::Tensor data = tensor.contiguous();
  return {static_cast<const char*>(data.data_ptr()), data.nbytes()};
}

// A tensor of `dtype` and shape [n, row_shape...] over a copy of `bytes`; `what` names the
// field in errors (a size that is not a whole number of rows).
inline at::Tensor from_bytes(const std::string& bytes, at::ScalarType dtype,
                             const std::vector<int64_t>& row_shape, const char* what) {
  int64_t row_bytes = static_cast<int64_t>(c10::elementSize(dtype));
  for (const int64_t size : row_shape) row_bytes *= size;
  GL_CHECK(row_bytes > 0 && static_cast<int64_t>(bytes.size()) % row_bytes == 0,
           "{}: {} bytes is not a whole number of {}-byte rows", what, bytes.size(), row_bytes);
  std::vector<int64_t> shape{static_cast<int64_t>(bytes.size()) / row_bytes};
  shape.insert(shape.end(), row_shape.begin(), row_shape.end());
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(dtype));
  if (!bytes.empty()) std::memcpy(out.data_ptr(), bytes.data(), bytes.size());
  return out;
}

inline at::Tensor ids_from_bytes(const std::string& bytes, const char* what) {
  return from_bytes(bytes, at::kLong, {}, what);
}

}  // namespace graphloom::distributed
