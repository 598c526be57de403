// Re-encoding a dataset's node features for storage (`--feature-dtype` of convert and
// partition): float32, float16, bfloat16, or int8 with a per-row scale; gathers decode them.
#pragma once

#include <string>

#include "graphloom/io/dataset.h"

namespace graphloom::features {

// Every node feature of `dataset` stored as `dtype` ("keep": as they are); a feature with a
// row scale is rescaled first.
void encode_dataset_features(io::Dataset& dataset, const std::string& dtype);

}  // namespace graphloom::features
