// The names of an enum's values, for the layers that speak text (CLI flags, Python keywords,
// logs): the library takes enums, and each enum lists its names once, beside its declaration,
// as a specialization of EnumNames:
//
//   template <> struct EnumNames<EvalMode> {
//     static constexpr std::array<std::pair<std::string_view, EvalMode>, 2> kNames{
//         {{"full", EvalMode::kFull}, {"sampled", EvalMode::kSampled}}};
//   };
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "graphloom/base/error.h"

namespace graphloom {

template <class E>
struct EnumNames;

template <class E>
std::string_view name_of(E value) {
  for (const auto& [name, v] : EnumNames<E>::kNames) {
    if (v == value) return name;
  }
  return "?";
}

// "full, sampled"
template <class E>
std::string enum_choices() {
  std::string out;
  for (const auto& [name, v] : EnumNames<E>::kNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// The value named `name`; an OptionError for `field` otherwise.
template <class E>
E enum_from_name(const std::string& field, std::string_view name) {
  for (const auto& [n, v] : EnumNames<E>::kNames) {
    if (n == name) return v;
  }
  throw OptionError(field, fmt::format("must be one of {}, got '{}'", enum_choices<E>(), name));
}

}  // namespace graphloom
