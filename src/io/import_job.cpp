// import_dataset: the reader for the job's source format, then the graph edits in a fixed
// order (symmetrize, self-loops, link splits), so that a held-out pair is never put back.
#include "graphloom/io/import_job.h"

#include <spdlog/spdlog.h>

#include "graphloom/base/error.h"
#include "graphloom/base/timer.h"
#include "graphloom/graph/transforms.h"
#include "graphloom/io/link_splits.h"

namespace graphloom::io {
namespace {

Dataset read_source(const ImportJob& job) {
  switch (job.source_format) {
    case SourceFormat::kGraphloom:
      return load_dataset(job.source, {.keep_edge_ids = true});
    case SourceFormat::kShared:
      if (is_movielens_folder(job.source)) {
        return import_movielens(job.source, {.split = job.rating_split, .seed = job.seed});
      }
      return import_shared_dataset(job.source, job.split);
    case SourceFormat::kOgb:
      return import_ogb_node_dataset(job.source, job.split_scheme);
    case SourceFormat::kEdgeList:
      return import_edge_list(job.source, job.edge_list);
  }
  GL_THROW("unknown source format");
}

}  // namespace

void ImportJob::validate() const {
  if (source.empty()) throw OptionError("source", "is required (a folder or a file)");
  if (split < 0) throw OptionError("split", fmt::format("must be >= 0, got {}", split));
  if (!link_split.empty()) {
    if (link_split.size() != 2) {
      throw OptionError("link_split", "expects two fractions VALID,TEST, e.g. 0.05,0.1");
    }
    const double sum = link_split[0] + link_split[1];
    if (link_split[0] < 0 || link_split[1] < 0 || sum >= 1) {
      throw OptionError(
          "link_split",
          fmt::format("fractions must be >= 0 and leave training edges (sum < 1), got {}, {}",
                      link_split[0], link_split[1]));
    }
  }
  if (rating_split != "temporal" && rating_split != "random") {
    throw OptionError("rating_split",
                      fmt::format("must be temporal or random, got '{}'", rating_split));
  }
}

Dataset import_dataset(const ImportJob& job) {
  job.validate();
  Timer timer;
  Dataset dataset = read_source(job);
  spdlog::info("read '{}' ({} nodes, {} edges) in {:.2f} s", job.source, dataset.num_nodes(),
               dataset.graph.num_edges(), timer.seconds());
  if (job.bidirected) {
    dataset.graph = graph::to_bidirected(dataset.graph);
    dataset.directed = false;
    spdlog::info("symmetrized: {} edges", dataset.graph.num_edges());
  }
  if (job.self_loops == SelfLoopEdit::kRemove) {
    dataset.graph = graph::remove_self_loops(dataset.graph);
  } else if (job.self_loops == SelfLoopEdit::kAdd) {
    dataset.graph = graph::add_self_loops(graph::remove_self_loops(dataset.graph));
  }
  if (!job.link_split.empty()) {
    dataset = make_link_splits(dataset, {.valid_fraction = job.link_split[0],
                                         .test_fraction = job.link_split[1],
                                         .seed = job.seed});
    spdlog::info(
        "link splits: {} train, {} valid, {} test positive pairs; {} message-passing edges",
        dataset.edge_splits.at("train").size(0), dataset.edge_splits.at("valid").size(0),
        dataset.edge_splits.at("test").size(0), dataset.graph.num_edges());
  }
  return dataset;
}

}  // namespace graphloom::io
