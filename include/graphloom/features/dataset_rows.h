// The rows a loader gathers from a whole dataset: every node feature as stored (decoded per
// batch when encoded, with its row scale) and the labels under "label".
#pragma once

#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/io/dataset.h"

namespace graphloom::features {

TensorFeatureSource dataset_rows(const io::Dataset& dataset);

}  // namespace graphloom::features
