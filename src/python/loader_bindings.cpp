// Bindings of sampling and loading: NeighborSampler over a CscGraph, the MiniBatch and Block it
// makes, and the DataLoader pipeline over a dataset. C++ threads do the work with the GIL
// released; the consumer waits in short slices so that Ctrl-C reaches Python.
#include <ATen/ATen.h>
#include <torch/csrc/utils/pybind.h>

#include <chrono>
#include <memory>
#include <optional>

#include "bindings.h"
#include "graphloom/base/error.h"
#include "graphloom/features/dataset_rows.h"
#include "graphloom/features/disk_dataset_rows.h"
#include "graphloom/io/dataset.h"
#include "graphloom/loader/data_loader.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom/sampling/negative_sampler.h"
#include "graphloom/sampling/neighbor_sampler.h"
#include "shared_cluster.h"

namespace py = pybind11;

namespace graphloom::python {
namespace {

// A neighbor sampler and the graph it reads (a local CSC or a DistGraph), kept alive together
// by the Python object.
class SamplerHandle {
 public:
  SamplerHandle(std::shared_ptr<const sampling::NeighborSource> source,
                sampling::NeighborSamplerOptions options)
      : source_(std::move(source)), sampler_(source_.get(), std::move(options)) {}
  const sampling::NeighborSampler& sampler() const { return sampler_; }
  int64_t num_nodes() const { return source_->num_nodes(); }

 private:
  std::shared_ptr<const sampling::NeighborSource> source_;
  sampling::NeighborSampler sampler_;
};

// The pair stage of a link-prediction loader: its negative sampler (none: positives only)
// and the loader::Pipeline fields that go with it.
struct PairStage {
  std::shared_ptr<const sampling::NegativeSampler> negatives;
  int64_t negatives_per_pair = 1;
  uint64_t seed = 0;
  uint64_t stream = 0;
};

// How the items of a loader are laid out.
enum class ItemKind {
  kNodes,       // [N] node ids
  kPairs,       // [N, 2] (src, dst) or [N, 3] with the pair's id last
  kTimedNodes,  // [N, 2] (node, time): temporal sampling
  kTimedPairs,  // [N, 4] (src, dst, id, time): temporal link prediction
};

// Range-checks the node ids of the items; a pair's id and a node's time are not node ids.
void check_item_ids(const at::Tensor& items, int64_t num_nodes, ItemKind kind) {
  const bool rows = kind != ItemKind::kNodes;
  if (items.scalar_type() != at::kLong || items.dim() != (rows ? 2 : 1) ||
      (kind == ItemKind::kPairs && items.size(1) != 2 && items.size(1) != 3) ||
      (kind == ItemKind::kTimedNodes && items.size(1) != 2) ||
      (kind == ItemKind::kTimedPairs && items.size(1) != 4)) {
    const char* expected = kind == ItemKind::kNodes        ? "[N] node ids"
                           : kind == ItemKind::kPairs      ? "[N, 2] or [N, 3] node pairs"
                           : kind == ItemKind::kTimedPairs ? "[N, 4] (src, dst, id, time) rows"
                                                           : "[N, 2] (node, time) rows";
    throw OptionError(
        "items", fmt::format("must be an int64 tensor of {}, got {} of shape [{}]", expected,
                             c10::toString(items.scalar_type()), fmt::join(items.sizes(), ", ")));
  }
  if (items.numel() == 0) return;
  const bool pairs = kind == ItemKind::kPairs || kind == ItemKind::kTimedPairs;
  const auto [low, high] = at::aminmax(pairs                      ? items.narrow(1, 0, 2)
                                       : kind == ItemKind::kNodes ? items
                                                                  : items.select(1, 0));
  const int64_t min = low.item<int64_t>();
  const int64_t max = high.item<int64_t>();
  GL_CHECK_AS(RangeError, min >= 0 && max < num_nodes,
              "items: node id {} is outside [0, {}) (the graph's nodes)", min < 0 ? min : max,
              num_nodes);
}

// The loader with everything it points to; members are destroyed in reverse order, so the
// loader's threads stop before the samplers and rows they read go away.
class LoaderHandle {
 public:
  LoaderHandle(std::shared_ptr<SamplerHandle> sampler,
               std::shared_ptr<const features::FeatureSource> rows, at::Tensor items,
               sampling::ItemSamplerOptions item_options, loader::DataLoaderOptions options,
               std::optional<PairStage> pairs, bool timed_items)
      : sampler_(std::move(sampler)),
        rows_(std::move(rows)),
        pairs_(std::move(pairs)),
        items_((check_item_ids(items, sampler_->num_nodes(),
                               pairs_ ? (timed_items ? ItemKind::kTimedPairs : ItemKind::kPairs)
                               : timed_items ? ItemKind::kTimedNodes
                                             : ItemKind::kNodes),
                items),
               std::move(item_options)),
        loader_(loader::Pipeline{.items = &items_,
                                 .pairs = pairs_.has_value(),
                                 .negatives = pairs_ ? pairs_->negatives.get() : nullptr,
                                 .negatives_per_pair = pairs_ ? pairs_->negatives_per_pair : 1,
                                 .negative_seed = pairs_ ? pairs_->seed : 0,
                                 .negative_stream = pairs_ ? pairs_->stream : 0,
                                 .timed_items = timed_items,
                                 .neighbors = &sampler_->sampler(),
                                 .features = rows_.get()},
                std::move(options)) {}

  void start_epoch(uint64_t epoch) {
    py::gil_scoped_release release;
    loader_.start_epoch(epoch);
  }

  // The next batch, or None after the last one.
  py::object next() {
    while (true) {
      bool ready = false;
      {
        py::gil_scoped_release release;
        ready = loader_.wait_next(std::chrono::milliseconds(50));
      }
      if (ready) break;
      if (PyErr_CheckSignals() != 0) {
        cancel();
        throw py::error_already_set();
      }
    }
    std::optional<sampling::MiniBatch> batch;
    {
      py::gil_scoped_release release;
      batch = loader_.next();
    }
    return batch ? py::cast(std::move(*batch)) : py::none();
  }

  // One whole epoch consumed in C++ (the batches dropped): the reference of
  // `python -m graphloom.bench`, which measures what the Python iteration adds to it.
  int64_t consume_epoch(uint64_t epoch) {
    py::gil_scoped_release release;
    loader_.start_epoch(epoch);
    int64_t seeds = 0;
    while (std::optional<sampling::MiniBatch> batch = loader_.next()) seeds += batch->seeds.numel();
    return seeds;
  }

  void cancel() {
    py::gil_scoped_release release;
    loader_.cancel();
  }
  int64_t num_batches() const { return loader_.num_batches(); }

 private:
  std::shared_ptr<SamplerHandle> sampler_;
  std::shared_ptr<const features::FeatureSource> rows_;
  std::optional<PairStage> pairs_;
  sampling::ItemSampler items_;
  loader::DataLoader loader_;
};

void bind_batches(py::module_& module) {
  py::class_<sampling::Block>(module, "Block")
      .def_readonly("src_ids", &sampling::Block::src_ids)
      .def_readonly("num_dst", &sampling::Block::num_dst)
      .def_readonly("indptr", &sampling::Block::indptr)
      .def_readonly("indices", &sampling::Block::indices)
      .def_readonly("edge_ids", &sampling::Block::edge_ids)
      .def_readonly("edge_types", &sampling::Block::edge_types)
      .def_readonly("src_times", &sampling::Block::src_times)
      .def_readonly("edge_weights", &sampling::Block::edge_weights)
      .def_property_readonly("num_src", &sampling::Block::num_src)
      .def_property_readonly("num_edges", &sampling::Block::num_edges);
  py::class_<sampling::PairBatch>(module, "PairBatch")
      .def_readonly("src", &sampling::PairBatch::src)
      .def_readonly("dst", &sampling::PairBatch::dst)
      .def_readonly("negative_dst", &sampling::PairBatch::negative_dst)
      .def_readonly("negative_src", &sampling::PairBatch::negative_src)
      .def_readonly("position", &sampling::PairBatch::position)
      .def_readonly("input_id", &sampling::PairBatch::input_id)
      .def_readonly("time", &sampling::PairBatch::time)
      .def_property_readonly("defined", &sampling::PairBatch::defined);
  py::class_<sampling::PygEdges>(module, "PygEdges")
      .def_readonly("edge_index", &sampling::PygEdges::edge_index)
      .def_readonly("edge_ids", &sampling::PygEdges::edge_ids)
      .def_readonly("num_sampled_nodes", &sampling::PygEdges::num_sampled_nodes)
      .def_readonly("num_sampled_edges", &sampling::PygEdges::num_sampled_edges)
      .def_property_readonly("defined", &sampling::PygEdges::defined);
  py::class_<sampling::MiniBatch>(module, "MiniBatch")
      .def_readonly("pyg", &sampling::MiniBatch::pyg)
      .def_readonly("index", &sampling::MiniBatch::index)
      .def_readonly("seeds", &sampling::MiniBatch::seeds)
      .def_readonly("seed_times", &sampling::MiniBatch::seed_times)
      .def_readonly("pairs", &sampling::MiniBatch::pairs)
      .def_readonly("blocks", &sampling::MiniBatch::blocks)
      .def_readonly("features", &sampling::MiniBatch::features)
      .def_readonly("labels", &sampling::MiniBatch::labels)
      .def_readonly("sample_seconds", &sampling::MiniBatch::sample_seconds)
      .def_readonly("fetch_seconds", &sampling::MiniBatch::fetch_seconds)
      .def_property_readonly("input_nodes", &sampling::MiniBatch::input_nodes);
}

void bind_options(py::module_& module) {
  py::class_<sampling::NeighborSamplerOptions>(module, "NeighborSamplerOptions")
      .def(py::init<>())
      .def_readwrite("fanouts", &sampling::NeighborSamplerOptions::fanouts)
      .def_readwrite("edge_type_fanouts", &sampling::NeighborSamplerOptions::edge_type_fanouts)
      .def_readwrite("replace", &sampling::NeighborSamplerOptions::replace)
      .def_readwrite("weighted", &sampling::NeighborSamplerOptions::weighted)
      .def_readwrite("each_node_once", &sampling::NeighborSamplerOptions::each_node_once)
      .def_property(
          "out_edges",
          [](const sampling::NeighborSamplerOptions& o) {
            return o.direction == sampling::EdgeDirection::kOut;
          },
          [](sampling::NeighborSamplerOptions& o, bool out) {
            o.direction = out ? sampling::EdgeDirection::kOut : sampling::EdgeDirection::kIn;
          })
      .def_readwrite("seed", &sampling::NeighborSamplerOptions::seed)
      .def_property(
          "method",
          [](const sampling::NeighborSamplerOptions& o) { return std::string(name_of(o.method)); },
          [](sampling::NeighborSamplerOptions& o, const std::string& name) {
            o.method = enum_from_name<sampling::SamplingMethod>("sampler", name);
          })
      .def_property(
          "layer_dependency",
          [](const sampling::NeighborSamplerOptions& o) { return o.labor.layer_dependency; },
          [](sampling::NeighborSamplerOptions& o, bool on) { o.labor.layer_dependency = on; })
      .def_property(
          "batch_dependency",
          [](const sampling::NeighborSamplerOptions& o) { return o.labor.batch_dependency; },
          [](sampling::NeighborSamplerOptions& o, int64_t span) {
            o.labor.batch_dependency = span;
          })
      .def_property(
          "importance_sampling",
          [](const sampling::NeighborSamplerOptions& o) { return o.labor.importance_sampling; },
          [](sampling::NeighborSamplerOptions& o, int64_t rounds) {
            o.labor.importance_sampling = rounds;
          })
      .def_property(
          "temporal_strategy",
          [](const sampling::NeighborSamplerOptions& o) {
            return std::string(name_of(o.temporal_strategy));
          },
          [](sampling::NeighborSamplerOptions& o, const std::string& name) {
            o.temporal_strategy =
                enum_from_name<sampling::TemporalStrategy>("temporal_strategy", name);
          });
  py::class_<sampling::ItemSamplerOptions>(module, "ItemSamplerOptions")
      .def(py::init<>())
      .def_readwrite("batch_size", &sampling::ItemSamplerOptions::batch_size)
      .def_readwrite("shuffle", &sampling::ItemSamplerOptions::shuffle)
      .def_readwrite("drop_last", &sampling::ItemSamplerOptions::drop_last)
      .def_readwrite("rank", &sampling::ItemSamplerOptions::rank)
      .def_readwrite("world_size", &sampling::ItemSamplerOptions::world_size)
      .def_readwrite("seed", &sampling::ItemSamplerOptions::seed);
  py::class_<sampling::NegativeSampler, std::shared_ptr<sampling::NegativeSampler>>(
      module, "NegativeSampler");
  py::class_<sampling::UniformNegativeSampler, sampling::NegativeSampler,
             std::shared_ptr<sampling::UniformNegativeSampler>>(module, "UniformNegativeSampler")
      .def(py::init<int64_t, bool>(), py::arg("num_nodes"), py::arg("both_ends") = false);
  py::class_<sampling::DegreeNegativeSampler, sampling::NegativeSampler,
             std::shared_ptr<sampling::DegreeNegativeSampler>>(module, "DegreeNegativeSampler")
      .def(py::init<const at::Tensor&, double>(), py::arg("degrees"), py::arg("power"));
  py::class_<PairStage>(module, "PairStage")
      .def(py::init<>())
      .def_readwrite("negatives", &PairStage::negatives)
      .def_readwrite("negatives_per_pair", &PairStage::negatives_per_pair)
      .def_readwrite("seed", &PairStage::seed)
      .def_readwrite("stream", &PairStage::stream);
  py::class_<loader::DataLoaderOptions>(module, "DataLoaderOptions")
      .def(py::init<>())
      .def_readwrite("num_workers", &loader::DataLoaderOptions::num_workers)
      .def_readwrite("prefetch", &loader::DataLoaderOptions::prefetch)
      .def_readwrite("threads_per_worker", &loader::DataLoaderOptions::threads_per_worker)
      .def_readwrite("feature_names", &loader::DataLoaderOptions::feature_names)
      .def_readwrite("label_name", &loader::DataLoaderOptions::label_name)
      .def_readwrite("pyg_layout", &loader::DataLoaderOptions::pyg_layout)
      .def_readwrite("pin_memory", &loader::DataLoaderOptions::pin_memory);
}

}  // namespace

void bind_loader(py::module_& module) {
  bind_batches(module);
  bind_options(module);
  py::class_<SamplerHandle, std::shared_ptr<SamplerHandle>>(module, "NeighborSampler")
      .def(py::init([](graph::CscGraph graph, sampling::NeighborSamplerOptions options) {
             return std::make_shared<SamplerHandle>(
                 std::make_shared<sampling::LocalNeighborSource>(std::move(graph)),
                 std::move(options));
           }),
           py::arg("graph"), py::arg("options"))
      .def(py::init([](std::shared_ptr<distributed::Cluster> graph,
                       sampling::NeighborSamplerOptions options) {
             return std::make_shared<SamplerHandle>(shared_graph(graph), std::move(options));
           }),
           py::arg("graph"), py::arg("options"))
      .def(
          "sample",
          [](const SamplerHandle& handle, const at::Tensor& seeds, uint64_t epoch, uint64_t batch,
             const std::optional<at::Tensor>& seed_times) {
            py::gil_scoped_release release;  // the source checks the seeds' range
            return handle.sampler().sample(seeds, seed_times.value_or(at::Tensor()), epoch, batch);
          },
          py::arg("seeds"), py::arg("epoch"), py::arg("batch"), py::arg("seed_times") = py::none());
  module.def(
      "per_edge_type_fanouts",
      [](const io::Dataset& dataset, const std::vector<int64_t>& fanouts,
         const std::vector<std::string>& overrides) {
        return sampling::per_edge_type_fanouts(dataset.schema, fanouts, overrides);
      },
      py::arg("dataset"), py::arg("fanouts"), py::arg("overrides"));
  py::class_<features::DiskDatasetRows, std::shared_ptr<features::DiskDatasetRows>>(
      module, "DiskDatasetRows")
      .def(py::init([](const io::Dataset& dataset, const std::string& cache_policy,
                       int64_t cache_bytes) {
             const features::CacheOptions cache{
                 .policy = enum_from_name<features::CachePolicy>("cache_policy", cache_policy),
                 .capacity_bytes = cache_bytes};
             py::gil_scoped_release release;
             return std::make_shared<features::DiskDatasetRows>(dataset, cache,
                                                                dataset.graph.indices);
           }),
           py::arg("dataset"), py::arg("cache_policy"), py::arg("cache_bytes"))
      .def("take_counters", &features::DiskDatasetRows::take_counters)
      .def_property_readonly("description", &features::DiskDatasetRows::description);
  py::class_<LoaderHandle>(module, "DataLoader")
      .def(py::init([](std::shared_ptr<SamplerHandle> sampler,
                       std::shared_ptr<features::DiskDatasetRows> rows, at::Tensor items,
                       sampling::ItemSamplerOptions item_options, loader::DataLoaderOptions options,
                       std::optional<PairStage> pairs, bool timed_items) {
             return std::make_unique<LoaderHandle>(
                 std::move(sampler), std::move(rows), std::move(items), std::move(item_options),
                 std::move(options), std::move(pairs), timed_items);
           }),
           py::arg("sampler"), py::arg("source"), py::arg("items"), py::arg("item_options"),
           py::arg("options"), py::arg("pairs") = py::none(), py::arg("timed_items") = false)
      .def(py::init([](std::shared_ptr<SamplerHandle> sampler, const io::Dataset& dataset,
                       at::Tensor items, sampling::ItemSamplerOptions item_options,
                       loader::DataLoaderOptions options, std::optional<PairStage> pairs,
                       bool timed_items) {
             return std::make_unique<LoaderHandle>(
                 std::move(sampler),
                 std::make_shared<features::TensorFeatureSource>(features::dataset_rows(dataset)),
                 std::move(items), std::move(item_options), std::move(options), std::move(pairs),
                 timed_items);
           }),
           py::arg("sampler"), py::arg("source"), py::arg("items"), py::arg("item_options"),
           py::arg("options"), py::arg("pairs") = py::none(), py::arg("timed_items") = false)
      .def(py::init([](std::shared_ptr<SamplerHandle> sampler,
                       std::shared_ptr<distributed::Cluster> source, at::Tensor items,
                       sampling::ItemSamplerOptions item_options, loader::DataLoaderOptions options,
                       std::optional<PairStage> pairs, bool timed_items) {
             return std::make_unique<LoaderHandle>(
                 std::move(sampler), shared_rows(source), std::move(items), std::move(item_options),
                 std::move(options), std::move(pairs), timed_items);
           }),
           py::arg("sampler"), py::arg("source"), py::arg("items"), py::arg("item_options"),
           py::arg("options"), py::arg("pairs") = py::none(), py::arg("timed_items") = false)
      .def("start_epoch", &LoaderHandle::start_epoch, py::arg("epoch"))
      .def("next", &LoaderHandle::next)
      .def("cancel", &LoaderHandle::cancel)
      .def("consume_epoch", &LoaderHandle::consume_epoch, py::arg("epoch"))
      .def_property_readonly("num_batches", &LoaderHandle::num_batches);
}

}  // namespace graphloom::python
