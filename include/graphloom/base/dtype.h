// numpy-style dtype names ("float32", "int64") for messages and reports.
#pragma once

#include <c10/core/ScalarType.h>

#include <string>

namespace graphloom {

std::string dtype_name(c10::ScalarType dtype);
// The inverse of dtype_name; throws graphloom::Error for an unknown name.
c10::ScalarType dtype_from_name(const std::string& name);

}  // namespace graphloom
