// What the link-prediction tests train on: a planted graph with link splits, and options that
// learn it in seconds.
#pragma once

#include "graphloom/io/generators.h"
#include "graphloom/io/link_splits.h"
#include "graphloom/train/train_options.h"

namespace graphloom::train::link_fixtures {

// 2,000 nodes of 5 planted classes, undirected, 5% of the edges held out to validate, 10% to
// test.
inline io::Dataset split_planted() {
  io::Dataset data = io::generate_planted(
      {.num_nodes = 2000, .num_classes = 5, .avg_degree = 10, .feat_dim = 16, .seed = 4});
  data.directed = false;
  return io::make_link_splits(data, {.valid_fraction = 0.05, .test_fraction = 0.1, .seed = 1});
}

inline TrainOptions quick_link_options() {
  TrainOptions options;
  options.model.kind = nn::ModelKind::kSage;
  options.model.hidden = 32;
  options.model.dropout = 0.0;
  options.fanouts = {5, 5};
  options.batch_size = 256;
  options.epochs = 8;
  options.lr = 0.01;
  options.progress = false;
  return options;
}

}  // namespace graphloom::train::link_fixtures
