// A `graphloom convert` import below its front ends: read another layout (or a dataset), then
// optionally symmetrize, change self-loops and hold out link-prediction splits. The CLI and
// the Python package then encode the features (features/dataset_encoding.h) and save.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graphloom/base/enum_names.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/importers.h"

namespace graphloom::io {

// shared: a folder of ../shared/datasets; ogb: an OGB node-property dataset or its raw/ folder;
// edgelist: a CSV/TSV file; graphloom: a dataset directory (e.g. to re-encode its features).
enum class SourceFormat { kShared, kOgb, kEdgeList, kGraphloom };
enum class SelfLoopEdit { kKeep, kRemove, kAdd };

struct ImportJob {
  SourceFormat source_format = SourceFormat::kGraphloom;
  std::string source;        // folder or file
  int split = 0;             // shared: splits/{train,valid,test}_K.idx instead of the default
  std::string split_scheme;  // ogb: the folder under split/ (default: the only one)
  EdgeListOptions edge_list;
  bool bidirected = false;  // add every edge's reverse, merge duplicates
  SelfLoopEdit self_loops = SelfLoopEdit::kKeep;
  // {valid, test} fractions of the edges held out as link-prediction splits; empty: none.
  std::vector<double> link_split;
  uint64_t seed = 0;                      // link_split and the MovieLens negatives
  std::string rating_split = "temporal";  // shared movielens_small: temporal | random

  // Throws OptionError naming the field (source, split, link_split, rating_split).
  void validate() const;
};

// Reads job.source and applies the job's edits, logging each step.
Dataset import_dataset(const ImportJob& job);

}  // namespace graphloom::io

namespace graphloom {
template <>
struct EnumNames<io::SourceFormat> {
  static constexpr std::array<std::pair<std::string_view, io::SourceFormat>, 4> kNames{
      {{"shared", io::SourceFormat::kShared},
       {"ogb", io::SourceFormat::kOgb},
       {"edgelist", io::SourceFormat::kEdgeList},
       {"graphloom", io::SourceFormat::kGraphloom}}};
};
template <>
struct EnumNames<io::SelfLoopEdit> {
  static constexpr std::array<std::pair<std::string_view, io::SelfLoopEdit>, 3> kNames{
      {{"keep", io::SelfLoopEdit::kKeep},
       {"remove", io::SelfLoopEdit::kRemove},
       {"add", io::SelfLoopEdit::kAdd}}};
};
}  // namespace graphloom
