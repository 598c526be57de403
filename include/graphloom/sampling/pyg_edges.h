// PyG's edge layout of a sampled batch, built from its blocks in one pass (no masks), so that
// loaders can build it in their worker threads and Python's to_pyg() only wraps tensors.
#pragma once

#include "graphloom/sampling/block.h"

namespace graphloom::sampling {

// The batch's blocks as PyG's NeighborLoader yields them (see PygEdges). The block that samples
// hop k contributes the in-edges of the nodes first reached at hop k - 1: since a block's
// destinations are ordered by hop, those are one tail of its CSC, copied as it is.
PygEdges pyg_edges(const MiniBatch& batch);

}  // namespace graphloom::sampling
