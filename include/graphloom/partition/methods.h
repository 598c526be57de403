// The ways to assign nodes to parts, as the options that choose them; each enum lists its
// names (CLI flags, Python keywords, logs) beside it.
#pragma once

#include <array>
#include <string_view>
#include <utility>

#include "graphloom/base/enum_names.h"

namespace graphloom::partition {

enum class PartitionMethod { kMetis, kStream, kRandom };

// How METIS splits: recursive bisection (METIS_PartGraphRecursive) or multilevel k-way
// (METIS_PartGraphKway, what DGL calls). On the reference graph (1M nodes, 20M edges, balancing
// train nodes and edges) recursive bisection took 10.8 s against 20.2 s for 2 parts and cut
// fewer edges (34.6% vs 35.7%), and likewise for 4 and 8 parts; on R-MAT (scale 16, 4 parts)
// it cut 23.9% against k-way's 41.2%. Past 8 parts its imbalance grows beyond METIS's 1.03
// (1.05 at 64 parts), so kAuto takes recursive bisection up to 8 parts and k-way above.
enum class MetisScheme { kAuto, kRecursive, kKway };

// The streaming score (assign.h).
enum class StreamAlgorithm { kFennel, kLdg };

}  // namespace graphloom::partition

namespace graphloom {
template <>
struct EnumNames<partition::PartitionMethod> {
  static constexpr std::array<std::pair<std::string_view, partition::PartitionMethod>, 3> kNames{
      {{"metis", partition::PartitionMethod::kMetis},
       {"stream", partition::PartitionMethod::kStream},
       {"random", partition::PartitionMethod::kRandom}}};
};
template <>
struct EnumNames<partition::MetisScheme> {
  static constexpr std::array<std::pair<std::string_view, partition::MetisScheme>, 3> kNames{
      {{"auto", partition::MetisScheme::kAuto},
       {"recursive", partition::MetisScheme::kRecursive},
       {"kway", partition::MetisScheme::kKway}}};
};
template <>
struct EnumNames<partition::StreamAlgorithm> {
  static constexpr std::array<std::pair<std::string_view, partition::StreamAlgorithm>, 2> kNames{
      {{"fennel", partition::StreamAlgorithm::kFennel}, {"ldg", partition::StreamAlgorithm::kLdg}}};
};
}  // namespace graphloom
