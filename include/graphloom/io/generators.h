// Synthetic graphs, deterministic under their seed whatever the thread count.
#pragma once

#include <cstdint>

#include "graphloom/io/dataset.h"

namespace graphloom::io {

// Planted partition: every node has a class; each of its `avg_degree / 2` generated edges goes
// to a node of the same class with probability `homophily`, else to a uniform random node, and
// is added in both directions. Features are the class centroid plus Gaussian noise, so that
// features alone are weak evidence and neighbourhoods strong evidence: a GNN clearly beats a
// feature-only model. The defaults are the EMBEDDED DEFAULT dataset of the main job.
struct PlantedOptions {
  int64_t num_nodes = 100000;
  int64_t num_classes = 10;
  double avg_degree = 12.0;
  double homophily = 0.8;
  int64_t feat_dim = 32;
  double feature_noise = 3.0;  // noise standard deviation; centroids are N(0, 1) per dimension
  double train_fraction = 0.1;
  double valid_fraction = 0.1;
  double test_fraction = 0.2;
  uint64_t seed = 0;
};
Dataset generate_planted(const PlantedOptions& options);

// R-MAT (Graph500 parameters by default): 2^scale nodes and edge_factor * 2^scale directed
// edges, node ids scrambled by a random permutation, random features and labels.
struct RmatOptions {
  int scale = 16;
  int64_t edge_factor = 16;
  double a = 0.57;
  double b = 0.19;
  double c = 0.19;
  int64_t feat_dim = 16;
  int64_t num_classes = 10;
  double train_fraction = 0.1;
  uint64_t seed = 0;
};
Dataset generate_rmat(const RmatOptions& options);

// A typed graph with planted preferences per relation: "item" nodes have classes, "user"
// nodes prefer one class. user -likes-> item edges go to an item of the user's class with
// probability `preference` (the signal), item -related-> item edges join uniform random items
// (noise), each with its reverse (item -liked_by-> user; related is symmetric). Item features
// are the class centroid plus noise, user features noise only; labels and splits cover items.
// A relational model can weigh the two relations differently; a homogeneous one cannot.
struct TypedPlantedOptions {
  int64_t num_items = 20000;
  int64_t num_users = 5000;
  int64_t num_classes = 5;
  int64_t likes_per_user = 20;
  double preference = 0.8;
  int64_t related_per_item = 5;
  int64_t feat_dim = 16;
  double feature_noise = 3.0;
  double train_fraction = 0.1;
  double valid_fraction = 0.1;
  double test_fraction = 0.2;
  uint64_t seed = 0;
};
Dataset generate_typed_planted(const TypedPlantedOptions& options);

}  // namespace graphloom::io
