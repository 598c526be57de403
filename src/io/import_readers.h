// Readers shared by the importers (private to the io module): text edge lists and raw
// little-endian arrays, each error naming the file (and line).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graphloom/io/importers.h"

namespace graphloom::io::detail {

struct EdgeColumns {
  std::vector<int64_t> src;
  std::vector<int64_t> dst;
  std::vector<float> weights;
  int64_t max_id = -1;
};

// `src dst [weight]` per line; comment and blank lines skipped.
EdgeColumns read_edge_text(const std::filesystem::path& path, const EdgeListOptions& options);

// A folder's meta.json; `what` says what the folder should be, in the error when it is missing.
nlohmann::json read_meta_json(const std::filesystem::path& dir, const std::string& what);

// A raw little-endian binary array of `count` elements of `dtype` (-1: whatever the size holds).
at::Tensor read_raw_array(const std::filesystem::path& path, at::ScalarType dtype, int64_t count);

}  // namespace graphloom::io::detail
