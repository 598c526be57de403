// Bindings of the dataset layer: CscGraph, io::Dataset, load_dataset and save_dataset. Tensors
// are shared with Python as they are (memory-mapped arrays stay mapped).
#include <ATen/ATen.h>
#include <torch/csrc/utils/pybind.h>

#include <optional>

#include "bindings.h"
#include "graphloom/graph/build.h"
#include "graphloom/graph/csc_graph.h"
#include "graphloom/graph/temporal.h"
#include "graphloom/io/dataset.h"

namespace py = pybind11;

namespace graphloom::python {
namespace {

using OptionalTensor = std::optional<at::Tensor>;

at::Tensor or_undefined(const OptionalTensor& tensor) { return tensor ? *tensor : at::Tensor(); }

graph::CscGraph make_csc_graph(at::Tensor indptr, at::Tensor indices, OptionalTensor edge_ids,
                               OptionalTensor weights) {
  graph::CscGraph graph;
  graph.num_nodes = indptr.numel() - 1;
  graph.indptr = std::move(indptr);
  graph.indices = std::move(indices);
  graph.edge_ids = or_undefined(edge_ids);
  graph.weights = or_undefined(weights);
  graph.validate();
  return graph;
}

// The dataset that save_dataset writes, from PyG-style pieces.
struct DatasetParts {
  std::string name;
  bool directed = true;
  at::Tensor edge_index;  // int64 [2, E], sources first
  int64_t num_nodes = 0;
  OptionalTensor edge_weights;
  std::map<std::string, at::Tensor> node_features;
  OptionalTensor labels;
  int64_t num_classes = 0;
  std::map<std::string, at::Tensor> splits;
  std::map<std::string, at::Tensor> edge_splits;
  OptionalTensor node_timestamp;  // int64 [num_nodes]
  OptionalTensor edge_timestamp;  // int64 [E], in edge_index order
};

io::Dataset assemble_dataset(const DatasetParts& parts) {
  io::Dataset dataset;
  dataset.name = parts.name;
  dataset.directed = parts.directed;
  dataset.graph = graph::csc_from_coo({.src = parts.edge_index[0].contiguous(),
                                       .dst = parts.edge_index[1].contiguous(),
                                       .num_nodes = parts.num_nodes,
                                       .weights = or_undefined(parts.edge_weights),
                                       .edge_time = or_undefined(parts.edge_timestamp),
                                       .keep_edge_ids = false});
  dataset.node_timestamp = or_undefined(parts.node_timestamp);
  dataset.node_features = parts.node_features;
  dataset.labels = or_undefined(parts.labels);
  dataset.num_classes = parts.num_classes;
  dataset.splits = parts.splits;
  dataset.edge_splits = parts.edge_splits;
  io::validate_dataset(dataset);
  return dataset;
}

void bind_csc_graph(py::module_& module) {
  py::class_<graph::CscGraph>(module, "CscGraph")
      .def(py::init(&make_csc_graph), py::arg("indptr"), py::arg("indices"),
           py::arg("edge_ids") = py::none(), py::arg("weights") = py::none())
      .def_readonly("num_nodes", &graph::CscGraph::num_nodes)
      .def_property_readonly("num_edges", &graph::CscGraph::num_edges)
      .def_readonly("indptr", &graph::CscGraph::indptr)
      .def_readonly("indices", &graph::CscGraph::indices)
      .def_readonly("edge_ids", &graph::CscGraph::edge_ids)
      .def_readonly("weights", &graph::CscGraph::weights)
      .def_readonly("node_type_offset", &graph::CscGraph::node_type_offset)
      .def_readonly("type_per_edge", &graph::CscGraph::type_per_edge)
      .def_readonly("edge_time", &graph::CscGraph::edge_time)
      .def("in_degrees", &graph::CscGraph::in_degrees)
      .def("out_degrees", &graph::CscGraph::out_degrees)
      .def("destinations", &graph::CscGraph::destinations);
}

void bind_dataset_class(py::module_& module) {
  py::class_<io::Dataset, std::shared_ptr<io::Dataset>>(module, "Dataset")
      .def_readonly("name", &io::Dataset::name)
      .def_readonly("directed", &io::Dataset::directed)
      .def_readonly("graph", &io::Dataset::graph)
      .def_readonly("node_features", &io::Dataset::node_features)
      .def_readonly("node_feature_scales", &io::Dataset::node_feature_scales)
      .def_readonly("labels", &io::Dataset::labels)
      .def_readonly("node_timestamp", &io::Dataset::node_timestamp)
      .def_readonly("num_classes", &io::Dataset::num_classes)
      .def_readonly("splits", &io::Dataset::splits)
      .def_readonly("edge_splits", &io::Dataset::edge_splits)
      .def_property_readonly("num_nodes", &io::Dataset::num_nodes)
      .def_property_readonly("node_types", [](const io::Dataset& d) { return d.schema.node_types; })
      .def_property_readonly("edge_types", [](const io::Dataset& d) {
        std::vector<std::string> names;
        for (const graph::EdgeType& type : d.schema.edge_types) {
          names.push_back(type.canonical_name());
        }
        return names;
      });
}

}  // namespace

void bind_dataset(py::module_& module) {
  bind_csc_graph(module);
  module.def(
      "sorted_by_time",
      [](const graph::CscGraph& graph, const OptionalTensor& node_time,
         const OptionalTensor& edge_time) {
        py::gil_scoped_release release;
        return graph::sorted_by_time(graph, or_undefined(node_time), or_undefined(edge_time));
      },
      py::arg("graph"), py::arg("node_time"), py::arg("edge_time"));
  bind_dataset_class(module);
  module.def(
      "load_dataset",
      [](const std::string& path, bool memory_map, bool strict, bool tables_in_memory) {
        py::gil_scoped_release release;
        return std::make_shared<io::Dataset>(io::load_dataset(
            path,
            {.strict = strict, .memory_map = memory_map, .tables_in_memory = tables_in_memory}));
      },
      py::arg("path"), py::arg("memory_map"), py::arg("strict"), py::arg("tables_in_memory"));
  py::class_<DatasetParts>(module, "DatasetParts")
      .def(py::init<>())
      .def_readwrite("name", &DatasetParts::name)
      .def_readwrite("directed", &DatasetParts::directed)
      .def_readwrite("edge_index", &DatasetParts::edge_index)
      .def_readwrite("num_nodes", &DatasetParts::num_nodes)
      .def_readwrite("edge_weights", &DatasetParts::edge_weights)
      .def_readwrite("node_features", &DatasetParts::node_features)
      .def_readwrite("labels", &DatasetParts::labels)
      .def_readwrite("num_classes", &DatasetParts::num_classes)
      .def_readwrite("splits", &DatasetParts::splits)
      .def_readwrite("edge_splits", &DatasetParts::edge_splits)
      .def_readwrite("node_timestamp", &DatasetParts::node_timestamp)
      .def_readwrite("edge_timestamp", &DatasetParts::edge_timestamp);
  module.def(
      "save_dataset",
      [](const DatasetParts& parts, const std::string& path, bool overwrite) {
        py::gil_scoped_release release;
        io::save_dataset(assemble_dataset(parts), path, overwrite);
      },
      py::arg("parts"), py::arg("path"), py::arg("overwrite"));
}

}  // namespace graphloom::python
