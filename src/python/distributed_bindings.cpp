// Bindings of the distributed graph for graphloom.distributed (DGL's DistGraph, DistTensor,
// node_split): a trainer's connection to the graph servers of a partitioned job, with this
// machine's part mapped from the servers' shared memory when a cluster id is given.
#include <ATen/ATen.h>
#include <torch/csrc/utils/pybind.h>

#include "bindings.h"
#include "dist_graph_handle.h"
#include "graphloom/base/enum_names.h"
#include "graphloom/distributed/graph/dist_graph.h"
#include "graphloom/distributed/graph/node_split.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/distributed/runtime/ip_config.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/sampling/neighbor_sampler.h"

namespace py = pybind11;

namespace graphloom::python {

DistGraphHandle::DistGraphHandle(const distributed::ClusterOptions& config,
                                 const distributed::FeatureCacheOptions& cache)
    : info_(partition::read_partition_info(config.part_config)),
      part_config_(config.part_config),
      machine_(config.machine) {
  const auto servers = distributed::read_ip_config(config.ip_config, config.servers_per_machine);
  GL_CHECK(static_cast<int64_t>(servers.size()) == info_.num_parts,
           "'{}' has {} parts but the ip config '{}' lists {} machines", config.part_config,
           info_.num_parts, config.ip_config, servers.size());
  GL_CHECK_AS(RangeError, machine_ >= 0 && machine_ < info_.num_parts,
              "machine {} has no part ({} parts)", machine_, info_.num_parts);
  const distributed::ClientOptions client = config.client_options();
  if (!config.cluster_id.empty()) {
    local_ = distributed::SharedPartition::attach(config.cluster_id, machine_, client.deadline);
  }
  graph_ =
      std::make_shared<distributed::DistGraph>(servers, client, local_ ? &local_->part() : nullptr);
  cache_ = distributed::make_feature_cache(
      *graph_, cache, info_.num_nodes, local_ ? &local_->part() : nullptr, part_config_, machine_);
}

std::shared_ptr<const features::FeatureSource> DistGraphHandle::shared_features(
    std::shared_ptr<DistGraphHandle> self) const {
  const features::FeatureSource* rows =
      cache_ ? static_cast<const features::FeatureSource*>(cache_.get()) : graph_.get();
  return {std::move(self), rows};
}

features::CacheStats DistGraphHandle::cache_stats(bool reset) const {
  return cache_ ? cache_->stats(reset) : features::CacheStats{};
}

DistGraphHandle::~DistGraphHandle() = default;

at::Tensor DistGraphHandle::split(const std::string& name) const {
  std::vector<at::Tensor> ids;
  for (int64_t part = 0; part < info_.num_parts; ++part) {
    ids.push_back(partition::load_partition_split(part_config_, info_, part, name));
  }
  return at::cat(ids);
}

namespace {

// A DistEmbedding (its rows and its optimizer's state on the servers) with the graph it lives on.
class EmbeddingHandle {
 public:
  EmbeddingHandle(std::shared_ptr<DistGraphHandle> graph, std::string name, int64_t dim,
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
  std::shared_ptr<DistGraphHandle> graph_;
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
      .def(py::init<std::shared_ptr<DistGraphHandle>, std::string, int64_t,
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
  py::class_<DistGraphHandle, std::shared_ptr<DistGraphHandle>>(module, "DistGraph")
      .def(py::init([](const ClusterOptions& config, const std::string& cache_policy,
                       int64_t cache_bytes) {
             const distributed::FeatureCacheOptions cache{
                 .policy = enum_from_name<features::CachePolicy>("cache_policy", cache_policy),
                 .bytes = cache_bytes};
             py::gil_scoped_release release;
             return std::make_shared<DistGraphHandle>(config, cache);
           }),
           py::arg("config"), py::arg("cache_policy") = "none", py::arg("cache_bytes") = 0)
      .def(
          "cache_stats",
          [](const DistGraphHandle& h, bool reset) {
            const features::CacheStats stats = h.cache_stats(reset);
            return py::dict(py::arg("hits") = stats.hits, py::arg("misses") = stats.misses);
          },
          py::arg("reset") = false)
      .def_property_readonly("num_nodes",
                             [](const DistGraphHandle& h) { return h.graph().num_nodes(); })
      .def_property_readonly("num_edges",
                             [](const DistGraphHandle& h) { return h.info().num_edges; })
      .def_property_readonly("graph_name",
                             [](const DistGraphHandle& h) { return h.info().graph_name; })
      .def_property_readonly("num_classes",
                             [](const DistGraphHandle& h) { return h.info().num_classes; })
      .def_property_readonly("machine", &DistGraphHandle::machine)
      .def_property_readonly("range_ends",
                             [](const DistGraphHandle& h) { return h.info().node_range_ends; })
      .def_property_readonly("feature_names",
                             [](const DistGraphHandle& h) {
                               std::vector<std::string> names;
                               for (const auto& [name, type] : h.info().features) {
                                 names.push_back(name);
                               }
                               return names;
                             })
      .def("has",
           [](const DistGraphHandle& h, const std::string& name) { return h.graph().has(name); })
      .def("row_shape",
           [](const DistGraphHandle& h, const std::string& name) {
             const features::FeatureInfo info = h.graph().info(name);
             std::vector<int64_t> shape{info.num_rows};
             shape.insert(shape.end(), info.row_shape.begin(), info.row_shape.end());
             return py::make_tuple(shape, info.dtype);  // (list, torch.dtype)
           })
      .def("owner_of", [](const DistGraphHandle& h,
                          const at::Tensor& ids) { return h.graph().book().owner_of(ids); })
      .def("split", &DistGraphHandle::split, py::arg("name"))
      .def("pull",
           [](const DistGraphHandle& h, const std::string& name, const at::Tensor& ids) {
             py::gil_scoped_release release;
             return h.graph().gather(name, ids);
           })
      .def("push",
           [](const DistGraphHandle& h, const std::string& name, const at::Tensor& ids,
              const at::Tensor& rows) {
             py::gil_scoped_release release;
             h.graph().push(name, ids, rows);
           })
      .def("create_tensor",
           [](DistGraphHandle& h, const std::string& name, at::ScalarType dtype,
              std::vector<int64_t> row_shape) {
             py::gil_scoped_release release;
             h.graph().create_tensor(name, {.dtype = dtype, .row_shape = std::move(row_shape)});
           })
      .def("split_positions",
           [](const DistGraphHandle& h, const at::Tensor& nodes, int64_t local_rank,
              int64_t trainers_per_part, bool force_even) {
             return distributed::split_items(nodes, h.graph().book(), h.machine(), local_rank,
                                             trainers_per_part, {.force_even = force_even});
           })
      .def("node_split", [](const DistGraphHandle& h, const at::Tensor& nodes, int64_t local_rank,
                            int64_t trainers_per_part, bool force_even) {
        return distributed::node_split(nodes, h.graph().book(), h.machine(), local_rank,
                                       trainers_per_part, {.force_even = force_even});
      });
  // The per-edge-type fanouts of a partitioned typed graph (the dataset overload is with the
  // sampler's bindings).
  module.def(
      "per_edge_type_fanouts",
      [](const DistGraphHandle& graph, const std::vector<int64_t>& fanouts,
         const std::vector<std::string>& overrides) {
        return sampling::per_edge_type_fanouts(graph.info().schema, fanouts, overrides);
      },
      py::arg("graph"), py::arg("fanouts"), py::arg("overrides"));
}

}  // namespace graphloom::python
