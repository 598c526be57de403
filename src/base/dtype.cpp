// dtype names as numpy users know them.
#include "graphloom/base/dtype.h"

#include "graphloom/base/error.h"

namespace graphloom {

std::string dtype_name(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Half:
      return "float16";
    case c10::ScalarType::BFloat16:
      return "bfloat16";
    case c10::ScalarType::Float:
      return "float32";
    case c10::ScalarType::Double:
      return "float64";
    case c10::ScalarType::Char:
      return "int8";
    case c10::ScalarType::Byte:
      return "uint8";
    case c10::ScalarType::Short:
      return "int16";
    case c10::ScalarType::Int:
      return "int32";
    case c10::ScalarType::Long:
      return "int64";
    case c10::ScalarType::Bool:
      return "bool";
    default:
      return c10::toString(dtype);
  }
}

c10::ScalarType dtype_from_name(const std::string& name) {
  using c10::ScalarType;
  for (const ScalarType dtype :
       {ScalarType::Half, ScalarType::BFloat16, ScalarType::Float, ScalarType::Double,
        ScalarType::Char, ScalarType::Byte, ScalarType::Short, ScalarType::Int, ScalarType::Long,
        ScalarType::Bool}) {
    if (dtype_name(dtype) == name) return dtype;
  }
  GL_THROW(
      "unknown dtype '{}' (expected float16, bfloat16, float32, float64, int8, uint8, "
      "int16, int32, int64 or bool)",
      name);
}

}  // namespace graphloom
