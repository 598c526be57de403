// `graphloom convert --from shared|ogb|edgelist SRC OUT`: import another layout as a dataset
// directory, optionally symmetrized or with self-loops changed.
#include <spdlog/spdlog.h>

#include <memory>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/error.h"
#include "graphloom/base/timer.h"
#include "graphloom/features/dataset_encoding.h"
#include "graphloom/graph/transforms.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/importers.h"
#include "graphloom/io/link_splits.h"

namespace graphloom::cli {
namespace {

struct ConvertOptions {
  std::string from;
  std::string source;
  std::string out;
  bool force = false;
  int split = 0;
  std::string split_scheme;
  std::string delimiter;
  bool header = false;
  bool weighted = false;
  int64_t num_nodes = -1;
  bool bidirected = false;
  std::string self_loops = "keep";
  std::string feature_dtype = "keep";
  std::vector<double> link_split;
  uint64_t seed = 0;
  std::string rating_split = "temporal";
};

char parse_delimiter(const std::string& text) {
  if (text.empty()) return 0;
  if (text == "tab" || text == "\\t") return '\t';
  if (text == "space" || text == "whitespace") return ' ';
  if (text.size() == 1) return text[0];
  throw UsageError(
      fmt::format("--delimiter: expected one character, 'tab' or 'space', got '{}'", text));
}

void run_convert(const ConvertOptions& options) {
  Timer timer;
  io::Dataset dataset;
  if (options.from == "graphloom") {
    dataset = io::load_dataset(options.source, {.keep_edge_ids = true});
  } else if (options.from == "shared" && io::is_movielens_folder(options.source)) {
    dataset =
        io::import_movielens(options.source, {.split = options.rating_split, .seed = options.seed});
  } else if (options.from == "shared") {
    dataset = io::import_shared_dataset(options.source, options.split);
  } else if (options.from == "ogb") {
    dataset = io::import_ogb_node_dataset(options.source, options.split_scheme);
  } else {
    dataset = io::import_edge_list(options.source, {.delimiter = parse_delimiter(options.delimiter),
                                                    .header = options.header,
                                                    .weighted = options.weighted,
                                                    .num_nodes = options.num_nodes});
  }
  spdlog::info("read '{}' ({} nodes, {} edges) in {:.2f} s", options.source, dataset.num_nodes(),
               dataset.graph.num_edges(), timer.seconds());
  if (options.bidirected) {
    dataset.graph = graph::to_bidirected(dataset.graph);
    dataset.directed = false;
    spdlog::info("symmetrized: {} edges", dataset.graph.num_edges());
  }
  if (options.self_loops == "remove") dataset.graph = graph::remove_self_loops(dataset.graph);
  if (options.self_loops == "add") {
    dataset.graph = graph::add_self_loops(graph::remove_self_loops(dataset.graph));
  }
  if (!options.link_split.empty()) {
    if (options.link_split.size() != 2) {
      throw UsageError("--link-split: expected VALID,TEST fractions, e.g. 0.05,0.1");
    }
    dataset = io::make_link_splits(dataset, {.valid_fraction = options.link_split[0],
                                             .test_fraction = options.link_split[1],
                                             .seed = options.seed});
    spdlog::info(
        "link splits: {} train, {} valid, {} test positive pairs; {} message-passing edges",
        dataset.edge_splits.at("train").size(0), dataset.edge_splits.at("valid").size(0),
        dataset.edge_splits.at("test").size(0), dataset.graph.num_edges());
  }
  features::encode_dataset_features(dataset, options.feature_dtype);
  io::save_dataset(dataset, options.out, options.force);
  fmt::print("wrote {}: {} nodes, {} edges, {} feature(s), {} split(s) in {:.2f} s\n", options.out,
             dataset.num_nodes(), dataset.graph.num_edges(), dataset.node_features.size(),
             dataset.splits.size(), timer.seconds());
}

}  // namespace

void add_feature_dtype_flag(CLI::App* cmd, std::string& dtype) {
  cmd->add_option("--feature-dtype", dtype,
                  "Store node features as float32, float16, bfloat16 or int8 (per-row scale); "
                  "they are decoded to float32 when gathered. 'keep' stores them as they are")
      ->check(CLI::IsMember({"keep", "float32", "float16", "bfloat16", "int8"}))
      ->capture_default_str();
}

void add_convert_command(CLI::App& app) {
  auto options = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Import a graph from another layout into a graphloom dataset directory");
  cmd->add_option("--from", options->from,
                  "Source layout: 'shared' (a folder of ../shared/datasets), 'ogb' (an OGB "
                  "node-property dataset or its raw/ folder), 'edgelist' (a CSV/TSV file), "
                  "'graphloom' (a dataset directory, e.g. to re-encode its features)")
      ->required()
      ->check(CLI::IsMember({"shared", "ogb", "edgelist", "graphloom"}));
  cmd->add_option("source", options->source, "Source folder or file")->required();
  cmd->add_option("out", options->out, "Output dataset directory (must not exist unless --force)")
      ->required();
  cmd->add_flag("--force", options->force, "Replace OUT if it exists");
  cmd->add_option("--split", options->split,
                  "shared: use splits/{train,valid,test}_K.idx instead of the default split")
      ->check(non_negative());
  cmd->add_option("--split-scheme", options->split_scheme,
                  "ogb: the folder under split/ to read (default: the only one)");
  cmd->add_option("--delimiter", options->delimiter,
                  "edgelist: field separator, one character, 'tab' or 'space' (default: detect)");
  cmd->add_flag("--header", options->header, "edgelist: the first data line is a header");
  cmd->add_flag("--weighted", options->weighted, "edgelist: read column 3 as the edge weight");
  cmd->add_option("--num-nodes", options->num_nodes,
                  "edgelist: number of nodes (default: largest id + 1)");
  cmd->add_flag("--bidirected", options->bidirected,
                "Add the reverse of every edge and merge duplicates (edge ids are renumbered)");
  cmd->add_option("--self-loops", options->self_loops,
                  "Self-loops: 'keep' them as they are, 'remove' them, or 'add' one per node")
      ->check(CLI::IsMember({"keep", "remove", "add"}))
      ->capture_default_str();
  add_feature_dtype_flag(cmd, options->feature_dtype);
  cmd->add_option("--link-split", options->link_split,
                  "VALID,TEST: hold out these fractions of the edges (each undirected pair once) "
                  "with as many sampled non-edges, for --task link; the graph keeps only the "
                  "training edges")
      ->delimiter(',');
  cmd->add_option("--rating-split", options->rating_split,
                  "shared movielens_small: which rating split becomes the edge splits, "
                  "temporal (the last 10% of ratings by time are the test) or random")
      ->check(CLI::IsMember({"temporal", "random"}))
      ->capture_default_str();
  cmd->add_option("--seed", options->seed,
                  "Random seed of --link-split and of the MovieLens validation/test negatives")
      ->capture_default_str();
  cmd->callback([options] { run_convert(*options); });
}

}  // namespace graphloom::cli
