// MovieLens (movielens_small layout of ../shared/datasets) as a typed graph with rating-pair
// edge splits. Ids: users first, then movies, then genres (DESIGN.md section 3).
#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <unordered_set>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/graph/build.h"
#include "graphloom/io/importers.h"
#include "import_readers.h"

namespace graphloom::io {

namespace fs = std::filesystem;

namespace {

enum EdgeTypeId : int8_t { kRates, kRatedBy, kHasGenre, kGenreOf };

// Row indices into rates_edges.csv of one split file, checked against the row count.
at::Tensor read_rows(const fs::path& path, int64_t num_rows) {
  at::Tensor rows = detail::read_raw_array(path, at::kLong, -1);
  if (rows.numel() > 0) {
    GL_CHECK(rows.min().item<int64_t>() >= 0 && rows.max().item<int64_t>() < num_rows,
             "'{}': row indices must be in [0, {})", path.string(), num_rows);
  }
  return rows;
}

// One movie per positive (user, movie) that the user never rated, from a stream per pair.
at::Tensor unrated_movies(const at::Tensor& pairs,
                          const std::vector<std::unordered_set<int64_t>>& rated,
                          int64_t first_movie, int64_t num_movies, uint64_t seed,
                          uint64_t purpose) {
  at::Tensor negatives = pairs.clone();
  int64_t* pair = negatives.data_ptr<int64_t>();
  for (int64_t i = 0; i < negatives.size(0); ++i) {
    const int64_t user = pair[2 * i];
    GL_CHECK(static_cast<int64_t>(rated[user].size()) < num_movies,
             "user {} rated every movie: no negative exists", user);
    RandomStream rng(stream_key({seed, purpose, static_cast<uint64_t>(i)}));
    int64_t movie = 0;
    do {
      movie = first_movie + static_cast<int64_t>(rng.uniform(num_movies));
    } while (rated[user].count(movie) > 0);
    pair[2 * i + 1] = movie;
  }
  return negatives;
}

}  // namespace

bool is_movielens_folder(const fs::path& dir) { return fs::exists(dir / "rates_edges.csv"); }

Dataset import_movielens(const fs::path& dir, const MovieLensOptions& options) {
  GL_CHECK(options.split == "temporal" || options.split == "random",
           "MovieLens split must be temporal or random, got '{}'", options.split);
  const nlohmann::json meta = detail::read_meta_json(dir, "the movielens_small folder");
  const nlohmann::json& counts = meta.at("node_types");
  const auto users = counts.at("user").get<int64_t>();
  const auto movies = counts.at("movie").get<int64_t>();
  const auto genres = counts.at("genre").get<int64_t>();
  const int64_t first_movie = users;
  const int64_t first_genre = users + movies;
  const int64_t num_nodes = users + movies + genres;

  const fs::path rates_file = dir / "rates_edges.csv";
  const detail::EdgeColumns rates = detail::read_edge_text(rates_file, {.delimiter = ','});
  const auto num_rates = static_cast<int64_t>(rates.src.size());
  const fs::path genre_file = dir / "movie_genre_edges.csv";
  const detail::EdgeColumns genre_edges = detail::read_edge_text(genre_file, {.delimiter = ','});
  for (int64_t i = 0; i < num_rates; ++i) {
    GL_CHECK(rates.src[i] < users && rates.dst[i] < movies,
             "'{}': row {} names user {} / movie {}, outside {} users and {} movies",
             rates_file.string(), i + 1, rates.src[i], rates.dst[i], users, movies);
  }
  for (std::size_t i = 0; i < genre_edges.src.size(); ++i) {
    GL_CHECK(genre_edges.src[i] < movies && genre_edges.dst[i] < genres,
             "'{}': row {} names movie {} / genre {}, outside {} movies and {} genres",
             genre_file.string(), i + 1, genre_edges.src[i], genre_edges.dst[i], movies, genres);
  }
  // Rating pairs in global ids: [rows, 2].
  const at::Tensor all_pairs = at::stack(
      {at::tensor(rates.src, at::kLong), at::tensor(rates.dst, at::kLong) + first_movie}, 1);
  const std::string prefix = options.split == "temporal" ? "rates_temporal_" : "rates_";
  Dataset dataset;
  dataset.name = fmt::format("movielens_small-{}", options.split);
  dataset.directed = true;
  const at::Tensor times =
      detail::read_raw_array(dir / "rates_timestamp.bin", at::kLong, num_rates);
  for (const char* split : {"train", "valid", "test"}) {
    const at::Tensor rows = read_rows(dir / (prefix + split + ".idx"), num_rates);
    dataset.edge_splits[split] = all_pairs.index_select(0, rows);
    dataset.edge_split_times[split] = times.index_select(0, rows);
  }
  std::vector<std::unordered_set<int64_t>> rated(static_cast<std::size_t>(users));
  for (int64_t i = 0; i < num_rates; ++i) rated[rates.src[i]].insert(rates.dst[i] + first_movie);
  dataset.edge_splits["valid_neg"] =
      unrated_movies(dataset.edge_splits.at("valid"), rated, first_movie, movies, options.seed, 1);
  dataset.edge_splits["test_neg"] =
      unrated_movies(dataset.edge_splits.at("test"), rated, first_movie, movies, options.seed, 2);

  // Message passing: training ratings both ways, every movie-genre edge both ways.
  const at::Tensor train = dataset.edge_splits.at("train");
  const at::Tensor movie_ids = at::tensor(genre_edges.src, at::kLong) + first_movie;
  const at::Tensor genre_ids = at::tensor(genre_edges.dst, at::kLong) + first_genre;
  const int64_t m = train.size(0);
  const int64_t g = movie_ids.numel();
  graph::CooInput input;
  input.src = at::cat({train.select(1, 0), train.select(1, 1), movie_ids, genre_ids});
  input.dst = at::cat({train.select(1, 1), train.select(1, 0), genre_ids, movie_ids});
  input.edge_types =
      at::cat({at::full({m}, kRates, at::kChar), at::full({m}, kRatedBy, at::kChar),
               at::full({g}, kHasGenre, at::kChar), at::full({g}, kGenreOf, at::kChar)});
  // Each rating edge carries its rating's time (temporal sampling reaches only a user's
  // earlier ratings); genres are timeless: time 0, before every rating.
  const at::Tensor train_times = dataset.edge_split_times.at("train");
  input.edge_time = at::cat({train_times, train_times, at::zeros({2 * g}, at::kLong)});
  input.num_nodes = num_nodes;
  input.keep_edge_ids = false;
  dataset.graph = graph::csc_from_coo(input);
  dataset.graph.node_type_offset = at::tensor({int64_t{0}, first_movie, first_genre, num_nodes});
  dataset.schema.node_types = {"user", "movie", "genre"};
  dataset.schema.edge_types = {{"user", "rates", "movie"},
                               {"movie", "rated_by", "user"},
                               {"movie", "has_genre", "genre"},
                               {"genre", "genre_of", "movie"}};

  const auto feat_dim = meta.value("movie_feat_dim", int64_t{20});
  const at::Tensor movie_features =
      detail::read_raw_array(dir / "movie_feat.bin", at::kFloat, movies * feat_dim)
          .view({movies, feat_dim});
  at::Tensor features = at::zeros({num_nodes, feat_dim}, at::kFloat);
  features.slice(0, first_movie, first_genre).copy_(movie_features);
  dataset.node_features["feat"] = features;
  spdlog::info("movielens: {} users, {} movies, {} genres; {} split: {} / {} / {} ratings", users,
               movies, genres, options.split, m, dataset.edge_splits.at("valid").size(0),
               dataset.edge_splits.at("test").size(0));
  validate_dataset(dataset);
  return dataset;
}

}  // namespace graphloom::io
