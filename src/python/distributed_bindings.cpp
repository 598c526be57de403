// Bindings of the distributed graph for graphloom.distributed (DGL's DistGraph, DistTensor,
// node_split): a trainer's connection to the graph servers of a partitioned job, with this
// machine's part mapped from the servers' shared memory when a cluster id is given.
#include <ATen/ATen.h>
#include <torch/csrc/utils/pybind.h>

#include "bindings.h"
#include "graphloom/base/enum_names.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/graph/cluster.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "shared_cluster.h"

namespace py = pybind11;

namespace graphloom::python {

namespace {

// A DistEmbedding (its rows and its optimizer's state on the servers) with the graph it lives on.
class EmbeddingHandle {
 public:
  EmbeddingHandle(std::shared_ptr<distributed::Cluster> graph, std::string name, int64_t dim,
                  distributed::SparseOptimizerOptions optimizer, float init_scale, uint64_t seed)
      : graph_(std::move(graph)),
        embedding_(graph_->graph(), std::move(name), dim, std::move(optimizer), init_scale, seed) {}

  at::Tensor pull(const at::Tensor& ids) const {
    py::gil_scoped_release release;
    return embedding_.pull(ids);
  }
  void step(const at::Tensor& ids, const at::Tensor& grads) const {
    py::gil_scoped_release release;
    embedding_.step(ids, grads);
  }

 private:
  std::shared_ptr<distributed::Cluster> graph_;
  distributed::DistEmbedding embedding_;
};

}  // namespace

void bind_distributed(py::module_& module) {
  py::class_<distributed::SparseOptimizerOptions>(module, "SparseOptimizerOptions")
      .def(py::init<>())
      .def_readwrite("kind", &distributed::SparseOptimizerOptions::kind)
      .def_readwrite("lr", &distributed::SparseOptimizerOptions::lr)
      .def_readwrite("eps", &distributed::SparseOptimizerOptions::eps)
      .def_readwrite("beta1", &distributed::SparseOptimizerOptions::beta1)
      .def_readwrite("beta2", &distributed::SparseOptimizerOptions::beta2);
  py::class_<EmbeddingHandle>(module, "DistEmbedding")
      .def(py::init<std::shared_ptr<distributed::Cluster>, std::string, int64_t,
                    distributed::SparseOptimizerOptions, float, uint64_t>(),
           py::arg("graph"), py::arg("name"), py::arg("dim"), py::arg("optimizer"),
           py::arg("init_scale"), py::arg("seed"))
      .def("pull", &EmbeddingHandle::pull, py::arg("ids"))
      .def("step", &EmbeddingHandle::step, py::arg("ids"), py::arg("grads"));
  using distributed::ClusterOptions;
  py::class_<ClusterOptions>(module, "ClusterOptions")
      .def(py::init<>())
      .def(py::init<const ClusterOptions&>())  // a copy
      .def_static("from_environment", &ClusterOptions::from_environment)
      .def_readwrite("part_config", &ClusterOptions::part_config)
      .def_readwrite("ip_config", &ClusterOptions::ip_config)
      .def_readwrite("num_servers", &ClusterOptions::servers_per_machine)
      .def_readwrite("machine", &ClusterOptions::machine)
      .def_readwrite("cluster_id", &ClusterOptions::cluster_id)
      .def_readwrite("token_file", &ClusterOptions::token_file)
      .def_readwrite("tls_ca", &ClusterOptions::tls_ca)
      .def_readwrite("tls_cert", &ClusterOptions::tls_cert)
      .def_readwrite("tls_key", &ClusterOptions::tls_key)
      .def_readwrite("deadline_seconds", &ClusterOptions::deadline_seconds);
  py::class_<distributed::Cluster, std::shared_ptr<distributed::Cluster>>(module, "DistGraph")
      .def(py::init([](const ClusterOptions& config, const std::string& cache_policy,
                       int64_t cache_bytes) {
             const distributed::FeatureCacheOptions cache{
                 .policy = enum_from_name<features::CachePolicy>("cache_policy", cache_policy),
                 .bytes = cache_bytes};
             py::gil_scoped_release release;
             GL_CHECK(config.machine >= 0, "DistGraph needs config.machine (initialize() sets it)");
             return std::make_shared<distributed::Cluster>(config, config.machine, cache);
           }),
           py::arg("config"), py::arg("cache_policy") = "none", py::arg("cache_bytes") = 0)
      .def(
          "cache_stats",
          [](const distributed::Cluster& h, bool reset) {
            const features::CacheStats stats = h.cache_stats(reset);
            return py::dict(py::arg("hits") = stats.hits, py::arg("misses") = stats.misses);
          },
          py::arg("reset") = false)
      .def_property_readonly("num_nodes",
                             [](const distributed::Cluster& h) { return h.graph().num_nodes(); })
      .def_property_readonly("num_edges",
                             [](const distributed::Cluster& h) { return h.info().num_edges; })
      .def_property_readonly("graph_name",
                             [](const distributed::Cluster& h) { return h.info().graph_name; })
      .def_property_readonly("num_classes",
                             [](const distributed::Cluster& h) { return h.info().num_classes; })
      .def_property_readonly("machine", &distributed::Cluster::machine)
      .def_property_readonly("range_ends",
                             [](const distributed::Cluster& h) { return h.info().node_range_ends; })
      .def_property_readonly("feature_names",
                             [](const distributed::Cluster& h) {
                               std::vector<std::string> names;
                               for (const auto& [name, type] : h.info().features) {
                                 names.push_back(name);
                               }
                               return names;
                             })
      .def("has", [](const distributed::Cluster& h,
                     const std::string& name) { return h.graph().has(name); })
      .def("row_shape",
           [](const distributed::Cluster& h, const std::string& name) {
             const features::FeatureInfo info = h.graph().info(name);
             std::vector<int64_t> shape{info.num_rows};
             shape.insert(shape.end(), info.row_shape.begin(), info.row_shape.end());
             return py::make_tuple(shape, info.dtype);  // (list, torch.dtype)
           })
      .def("owner_of", [](const distributed::Cluster& h,
                          const at::Tensor& ids) { return h.graph().book().owner_of(ids); })
      .def("split", &distributed::Cluster::split, py::arg("name"))
      .def_property_readonly(
          "node_types", [](const distributed::Cluster& h) { return h.info().schema.node_types; })
      .def_property_readonly("edge_types",
                             [](const distributed::Cluster& h) {
                               std::vector<std::string> names;
                               for (const graph::EdgeType& type : h.info().schema.edge_types) {
                                 names.push_back(type.canonical_name());
                               }
                               return names;
                             })
      .def("node_type_of",
           [](const distributed::Cluster& h) { return partition::relabelled_node_types(h.info()); })
      .def("pull",
           [](const distributed::Cluster& h, const std::string& name, const at::Tensor& ids) {
             py::gil_scoped_release release;
             return h.graph().gather(name, ids);
           })
      .def("push",
           [](const distributed::Cluster& h, const std::string& name, const at::Tensor& ids,
              const at::Tensor& rows) {
             py::gil_scoped_release release;
             h.graph().push(name, ids, rows);
           })
      .def("create_tensor",
           [](distributed::Cluster& h, const std::string& name, at::ScalarType dtype,
              std::vector<int64_t> row_shape) {
             py::gil_scoped_release release;
             h.graph().create_tensor(name, {.dtype = dtype, .row_shape = std::move(row_shape)});
           })
      .def("split_positions",
           [](const distributed::Cluster& h, const at::Tensor& nodes, int64_t local_rank,
              int64_t trainers_per_part, bool force_even) {
             return h.split_items(nodes, local_rank, trainers_per_part, {.force_even = force_even});
           })
      .def("node_split", [](const distributed::Cluster& h, const at::Tensor& nodes,
                            int64_t local_rank, int64_t trainers_per_part, bool force_even) {
        return nodes.index_select(
            0, h.split_items(nodes, local_rank, trainers_per_part, {.force_even = force_even}));
      });
  // The per-edge-type fanouts of a partitioned typed graph (the dataset overload is with the
  // sampler's bindings).
  module.def(
      "per_edge_type_fanouts",
      [](const distributed::Cluster& graph, const std::vector<int64_t>& fanouts,
         const std::vector<std::string>& overrides) {
        return sampling::per_edge_type_fanouts(graph.info().schema, fanouts, overrides);
      },
      py::arg("graph"), py::arg("fanouts"), py::arg("overrides"));
}

}  // namespace graphloom::python
