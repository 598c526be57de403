// The working set of a training epoch: how many feature rows its batches gather, how many
// distinct ones, and what a cache of a given size and policy would leave to read, from a
// replay of the epoch's sampled input nodes (`graphloom inspect --working-set`). What sizes the
// cache of `--feature-storage disk` for a table larger than memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphloom/features/cached_feature_source.h"
#include "graphloom/io/dataset.h"

namespace graphloom::loader {

struct WorkingSetOptions {
  std::vector<int64_t> fanouts{10, 10, 10};  // input layer first
  int64_t batch_size = 1024;
  std::string split = "train";  // the seeds: a node split of the dataset
  int64_t max_batches = 0;      // batches of the epoch replayed (0: all)
  // The cache replayed (kNone: none; any other needs cache_bytes); rows of the dataset's "feat".
  features::CachePolicy cache_policy = features::CachePolicy::kNone;
  int64_t cache_bytes = 0;
  uint64_t seed = 0;
};

struct WorkingSet {
  int64_t batches = 0;        // replayed
  int64_t epoch_batches = 0;  // in the epoch
  int64_t num_rows = 0;       // of "feat"
  int64_t row_bytes = 0;      // one stored row of "feat"
  int64_t rows_gathered = 0;  // input rows of the replayed batches, repeats across batches counted
  int64_t distinct_rows = 0;  // rows the replayed batches read at least once
  // With a cache: its rows, the rows it missed in the first epoch from cold, and in the second
  // epoch's batches after it (warm); -1 without one.
  int64_t cache_rows = -1;
  int64_t cold_rows_missed = -1;
  int64_t rows_missed = -1;
  int64_t next_rows_gathered = 0;  // the next epoch's input rows (the warm replay)
};

// Samples the batches of `options.split` (shuffled) that a run's first epoch (0) samples and
// counts their input nodes; with a cache, replays them and then the second epoch's through
// it. The graph is the dataset's as stored (a model that adds self-loops samples a little
// more). Throws OptionError naming the
// option for a split or feature the dataset lacks.
WorkingSet estimate_working_set(const io::Dataset& dataset, const WorkingSetOptions& options);

// The report `inspect --working-set` prints.
std::string describe_working_set(const WorkingSet& set, const WorkingSetOptions& options);

}  // namespace graphloom::loader
