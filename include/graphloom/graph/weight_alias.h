// Alias tables over a graph's edge weights (Walker/Vose): with one per column (per edge-type
// segment of a column in typed graphs), weighted sampling picks an edge with one random
// position and one coin, whatever the column's degree.
#pragma once

#include <bit>
#include <cstdint>

#include "graphloom/graph/csc_graph.h"

namespace graphloom::graph {

// The graph with weight_alias built from its weights (undefined without weights); one pass
// over the edges, parallel over columns. Weights that are not positive (0, negative, NaN) are
// never picked. Throws graphloom::Error if weights is not one float32/float64 value per edge.
CscGraph with_weight_alias(const CscGraph& graph);

// One entry of the table: position j of a segment is kept with probability `keep`, else it
// stands for position `other` of the same segment. Packed in one int64 so that a pick reads
// one word: the float32 bits of `keep` low, `other` high. keep > 0 exactly where the weight is
// positive, so the table alone tells which edges can be picked.
struct AliasEntry {
  float keep;
  int32_t other;
};

constexpr int64_t pack_alias_entry(AliasEntry entry) {
  return static_cast<int64_t>((static_cast<uint64_t>(static_cast<uint32_t>(entry.other)) << 32) |
                              std::bit_cast<uint32_t>(entry.keep));
}

constexpr AliasEntry unpack_alias_entry(int64_t packed) {
  const auto bits = static_cast<uint64_t>(packed);
  return {std::bit_cast<float>(static_cast<uint32_t>(bits)),
          static_cast<int32_t>(static_cast<uint32_t>(bits >> 32))};
}

}  // namespace graphloom::graph
