// Dispatch on the index dtype of a tensor: int32 and int64 graphs share one templated kernel
// (GraphBolt's AT_DISPATCH_INDEX_TYPES, written as a generic lambda so dispatches can nest).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>

#include "graphloom/base/error.h"

namespace graphloom {

// Calls `fn(T{})` with T = int32_t or int64_t matching `dtype`; `what` names the array in errors.
template <typename Fn>
decltype(auto) dispatch_index_type(c10::ScalarType dtype, const char* what, Fn&& fn) {
  switch (dtype) {
    case c10::ScalarType::Int:
      return fn(int32_t{});
    case c10::ScalarType::Long:
      return fn(int64_t{});
    default:
      GL_THROW("{} must be int32 or int64, got {}", what, c10::toString(dtype));
  }
}

// Calls `fn(T{})` with T = int8_t, int16_t, int32_t or int64_t matching `dtype` (edge types).
template <typename Fn>
decltype(auto) dispatch_integer_type(c10::ScalarType dtype, const char* what, Fn&& fn) {
  switch (dtype) {
    case c10::ScalarType::Char:
      return fn(int8_t{});
    case c10::ScalarType::Short:
      return fn(int16_t{});
    case c10::ScalarType::Int:
      return fn(int32_t{});
    case c10::ScalarType::Long:
      return fn(int64_t{});
    default:
      GL_THROW("{} must be int8, int16, int32 or int64, got {}", what, c10::toString(dtype));
  }
}

// Calls `fn(T{})` with T = float or double matching `dtype`.
template <typename Fn>
decltype(auto) dispatch_float_type(c10::ScalarType dtype, const char* what, Fn&& fn) {
  switch (dtype) {
    case c10::ScalarType::Float:
      return fn(float{});
    case c10::ScalarType::Double:
      return fn(double{});
    default:
      GL_THROW("{} must be float32 or float64, got {}", what, c10::toString(dtype));
  }
}

}  // namespace graphloom
