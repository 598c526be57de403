// Importers from other layouts into a graphloom Dataset (written with save_dataset):
// `../shared/datasets` folders, OGB node-property raw directories and CSV/TSV edge lists.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "graphloom/io/dataset.h"

namespace graphloom::io {

// A folder of ../shared/datasets (meta.json, edges.csv, feat.bin, labels.bin, *.idx).
// `split_index` > 0 selects splits/{train,valid,test}_{k}.idx instead of the default split.
Dataset import_shared_dataset(const std::filesystem::path& dir, int split_index = 0);

// An OGB node-property raw directory (the dataset folder or its `raw/`): edge.csv.gz,
// num-node-list.csv.gz, optional node-feat.csv.gz and node-label.csv.gz, and
// ../split/<scheme>/{train,valid,test}.csv.gz (`split_scheme` empty: the only scheme there).
Dataset import_ogb_node_dataset(const std::filesystem::path& dir, const std::string& split_scheme);

struct EdgeListOptions {
  char delimiter = 0;      // 0: detect from the first data line (',', '\t' or spaces)
  bool header = false;     // skip the first non-comment line
  bool weighted = false;   // read a third column as the edge weight
  int64_t num_nodes = -1;  // -1: max id + 1
};

// An edge list's field separator as a user writes it: one character, 'tab' (or '\t'), 'space'
// (any run of spaces and tabs), or empty to detect it. Throws OptionError("delimiter").
char parse_delimiter(const std::string& text);

// ../shared/datasets/movielens_small as a typed graph for link prediction: node types user,
// movie (20 genre features) and genre; edge types user:rates:movie, movie:rated_by:user,
// movie:has_genre:genre, genre:genre_of:movie. The graph holds only the training ratings (both
// directions) and every movie-genre edge; edge splits train / valid / test are the rating
// pairs (user, movie) of the chosen split, valid_neg / test_neg one movie per positive that
// the user never rated (drawn with `seed`). Tag applications are not imported.
struct MovieLensOptions {
  std::string split = "temporal";  // temporal | random (the folder's rates_*.idx files)
  uint64_t seed = 0;
};
bool is_movielens_folder(const std::filesystem::path& dir);
Dataset import_movielens(const std::filesystem::path& dir, const MovieLensOptions& options = {});

// A text edge list: one `src dst [weight]` per line; lines starting with '#' or '%' are
// comments. Malformed lines are errors that name the line number.
Dataset import_edge_list(const std::filesystem::path& path, const EdgeListOptions& options);

}  // namespace graphloom::io
