// Whole-graph transforms. Each returns a new graph and leaves its input untouched.
#pragma once

#include "graphloom/graph/csc_graph.h"

namespace graphloom::graph {

// The reverse graph, i.e. the CSR view of `graph` (out-edges per node), keeping edge ids
// and weights.
CscGraph reverse(const CscGraph& graph);

// Every edge in both directions, duplicates merged. Edge ids and weights are dropped (as DGL's
// to_bidirected does): the result's edges are new. Optionally without self-loops (METIS's input).
CscGraph to_bidirected(const CscGraph& graph, bool remove_self_loops = false);

// Adds one edge (v, v) per node, after v's existing in-edges. New edges get the ids after the
// largest existing one (so ids stay unique), weight `self_loop_weight`, and with edge times
// the earliest time (a loop is usable whenever its node is).
CscGraph add_self_loops(const CscGraph& graph, double self_loop_weight = 1.0);

// Removes every edge (v, v).
CscGraph remove_self_loops(const CscGraph& graph);

// Sorts every column by source id and keeps the first edge (lowest position) of each
// duplicated (src, dst) pair; optionally drops self-loops in the same pass.
CscGraph dedupe(const CscGraph& graph, bool remove_self_loops = false);

// The graph with its edges reordered by `order` (int64 [num_edges]: the old position of each
// new one, a permutation that keeps every edge in its column). Sources, edge ids (materialized,
// so ids stay those of the input), weights, edge types and edge times follow; alias tables are
// dropped. What sorting columns by a key (edge type, time) builds on.
CscGraph reorder_within_columns(const CscGraph& graph, const at::Tensor& order);

}  // namespace graphloom::graph
