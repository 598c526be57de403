// What a dataset holds, as one JSON object: sizes, degree statistics, features, labels, splits
// and, for typed graphs, the node and edge type counts. `graphloom inspect` prints it (as text
// or with --json); anything else that describes a dataset reads the same report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "graphloom/io/dataset.h"

namespace graphloom::io {

// Keys: name, num_nodes, num_edges, directed, index_dtype, weighted, in_degree and out_degree
// ({min, mean, max, zero}), node_features ({name: {dtype, shape, row_scale}}), splits and
// edge_splits ({name: count}); with labels num_classes, label_histogram and unlabeled; for typed
// graphs node_types and edge_types ({name: count}).
nlohmann::json dataset_report(const Dataset& dataset);

// The report as `graphloom inspect` prints it, a line per fact; with the optional keys `path`
// (after the name) and `load_seconds` (last line) where the report has them.
std::string describe_dataset_report(const nlohmann::json& report);

}  // namespace graphloom::io
