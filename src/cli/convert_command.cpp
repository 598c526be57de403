// `graphloom convert --from shared|ogb|edgelist SRC OUT`: import another layout as a dataset
// directory, optionally symmetrized or with self-loops changed.
#include <spdlog/spdlog.h>

#include <memory>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/base/timer.h"
#include "graphloom/features/dataset_encoding.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/import_job.h"
#include "graphloom/io/importers.h"

namespace graphloom::cli {
namespace {

struct ConvertCommand {
  io::ImportJob job;
  std::string out;
  bool force = false;
  std::string delimiter;
  std::string feature_dtype = "keep";
};

void run_convert(ConvertCommand command) {
  Timer timer;
  command.job.edge_list.delimiter = io::parse_delimiter(command.delimiter);
  io::Dataset dataset = io::import_dataset(command.job);
  features::encode_dataset_features(dataset, command.feature_dtype);
  io::save_dataset(dataset, command.out, command.force);
  fmt::print("wrote {}: {} nodes, {} edges, {} feature(s), {} split(s) in {:.2f} s\n", command.out,
             dataset.num_nodes(), dataset.graph.num_edges(), dataset.node_features.size(),
             dataset.splits.size(), timer.seconds());
}

}  // namespace

void add_feature_dtype_flag(CLI::App* cmd, std::string& dtype) {
  cmd->add_option("--feature-dtype", dtype,
                  "Store node features as float32, float16, bfloat16 or int8 (per-row scale); "
                  "they are decoded to float32 when gathered. 'keep' stores them as they are")
      ->check(CLI::IsMember({"keep", "float32", "float16", "bfloat16", "int8"}));
}

void add_convert_command(CLI::App& app) {
  auto c = std::make_shared<ConvertCommand>();
  io::ImportJob& job = c->job;
  CLI::App* cmd = app.add_subcommand(
      "convert", "Import a graph from another layout into a graphloom dataset directory");
  add_enum_option(cmd, "--from", job.source_format,
                  "Source layout: 'shared' (a folder of ../shared/datasets), 'ogb' (an OGB "
                  "node-property dataset or its raw/ folder), 'edgelist' (a CSV/TSV file), "
                  "'graphloom' (a dataset directory, e.g. to re-encode its features)")
      ->required();
  cmd->add_option("source", job.source, "Source folder or file")->required();
  cmd->add_option("out", c->out, "Output dataset directory (must not exist unless --force)")
      ->required();
  cmd->add_flag("--force", c->force, "Replace OUT if it exists");
  cmd->add_option("--split", job.split,
                  "shared: use splits/{train,valid,test}_K.idx instead of the default split (0)")
      ->check(non_negative());
  cmd->add_option("--split-scheme", job.split_scheme,
                  "ogb: the folder under split/ to read (default: the only one)");
  cmd->add_option("--delimiter", c->delimiter,
                  "edgelist: field separator, one character, 'tab' or 'space' (default: detect)");
  cmd->add_flag("--header", job.edge_list.header, "edgelist: the first data line is a header");
  cmd->add_flag("--weighted", job.edge_list.weighted, "edgelist: read column 3 as the edge weight");
  cmd->add_option("--num-nodes", job.edge_list.num_nodes,
                  "edgelist: number of nodes (-1: largest id + 1)");
  cmd->add_flag("--bidirected", job.bidirected,
                "Add the reverse of every edge and merge duplicates (edge ids are renumbered)");
  add_enum_option(cmd, "--self-loops", job.self_loops,
                  "Self-loops: 'keep' them as they are, 'remove' them, or 'add' one per node");
  add_feature_dtype_flag(cmd, c->feature_dtype);
  cmd->add_option("--link-split", job.link_split,
                  "VALID,TEST: hold out these fractions of the edges (each undirected pair once) "
                  "with as many sampled non-edges, for --task link; the graph keeps only the "
                  "training edges")
      ->delimiter(',');
  cmd->add_option("--rating-split", job.rating_split,
                  "shared movielens_small: which rating split becomes the edge splits, "
                  "temporal (the last 10% of ratings by time are the test) or random")
      ->check(CLI::IsMember({"temporal", "random"}));
  cmd->add_option("--seed", job.seed,
                  "Random seed of --link-split and of the MovieLens validation/test negatives");
  cmd->callback([c] { run_convert(*c); });
}

}  // namespace graphloom::cli
