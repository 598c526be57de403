// The owner-side sparse optimizer step of DistEmbedding rows (internal to the graph server):
// Adagrad or Adam applied row by row, each row under its lock, so that concurrent updates of a
// row from several trainers never interleave (DGL had NaNs from racing updates, dgl#3561).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

namespace graphloom::distributed {

struct SparseStep {
  std::string optimizer;  // adagrad | adam
  float lr = 0, eps = 0, beta1 = 0, beta2 = 0;
};

// The rows of one embedding and its optimizer state, all [rows, dim] float32 except `steps`
// ([rows], Adam's per-row step count); `second` and `steps` are null for Adagrad.
struct SparseRows {
  float* weight = nullptr;
  float* first = nullptr;   // Adagrad's sum of squares, or Adam's m
  float* second = nullptr;  // Adam's v
  float* steps = nullptr;
  int64_t dim = 0;
};

using RowLocks = std::array<std::mutex, 1024>;

// Applies `grads` ([count, dim]) to rows `row` (local, distinct or not) of `state`.
void apply_sparse_step(const SparseStep& step, const SparseRows& state, const int64_t* row,
                       const float* grads, int64_t count, RowLocks& locks);

}  // namespace graphloom::distributed
