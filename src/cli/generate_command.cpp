// `graphloom generate planted|typed-planted|rmat`: synthetic datasets. `generate planted` with no
// flags writes the embedded default dataset that the main job uses.
#include <memory>

#include "commands.h"
#include "graphloom/base/timer.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/generators.h"

namespace graphloom::cli {
namespace {

// A generator's subcommand: its --out (by default the dataset's name, `out_help` in words) and
// --force, and a callback that generates with `options` and writes the dataset.
template <class Options>
CLI::App* add_generator(CLI::App* generate, const std::string& name, const std::string& help,
                        std::shared_ptr<Options> options, io::Dataset (*make)(const Options&),
                        const std::string& out_help) {
  struct Output {
    std::string out;
    bool force = false;
  };
  auto output = std::make_shared<Output>();
  CLI::App* cmd = generate->add_subcommand(name, help);
  cmd->add_option("--out", output->out, "Output directory")->default_str(out_help);
  cmd->add_flag("--force", output->force, "Replace the output directory if it exists");
  cmd->callback([options, output, make] {
    Timer timer;
    const io::Dataset dataset = make(*options);
    const double generate_seconds = timer.seconds();
    const std::string out = output->out.empty() ? dataset.name : output->out;
    io::save_dataset(dataset, out, output->force);
    fmt::print(
        "wrote {}: {} nodes, {} edges, {} classes (generated in {:.2f} s, written in {:.2f} s)\n",
        out, dataset.num_nodes(), dataset.graph.num_edges(), dataset.num_classes, generate_seconds,
        timer.seconds() - generate_seconds);
  });
  return cmd;
}

// The planted generators' features and splits; `labelled` names the nodes that have a class.
template <class Options>
void add_planted_flags(CLI::App* cmd, Options& o, const std::string& labelled) {
  cmd->add_option("--feat-dim", o.feat_dim, "Feature dimension");
  cmd->add_option(
      "--feature-noise", o.feature_noise,
      "Standard deviation of the noise added to each " + labelled + "'s class centroid");
  cmd->add_option("--train-fraction", o.train_fraction, "Share of " + labelled + "s for training");
  cmd->add_option("--valid-fraction", o.valid_fraction,
                  "Share of " + labelled + "s for validation");
  cmd->add_option("--test-fraction", o.test_fraction, "Share of " + labelled + "s for testing");
  cmd->add_option("--seed", o.seed, "Random seed");
}

}  // namespace

void add_generate_command(CLI::App& app) {
  CLI::App* generate = app.add_subcommand("generate", "Write a synthetic dataset directory");
  generate->require_subcommand(1);

  auto planted_options = std::make_shared<io::PlantedOptions>();
  CLI::App* planted = add_generator<io::PlantedOptions>(
      generate, "planted",
      "Planted-partition graph with class-centroid features (no flags: the embedded default "
      "dataset of the main job)",
      planted_options, io::generate_planted, "planted");
  planted->add_option("--num-nodes", planted_options->num_nodes, "Number of nodes");
  planted->add_option("--num-classes", planted_options->num_classes, "Number of classes");
  planted->add_option("--avg-degree", planted_options->avg_degree,
                      "Average degree (each generated edge is added in both directions)");
  planted->add_option("--homophily", planted_options->homophily,
                      "Probability that a generated edge stays inside its class");
  add_planted_flags(planted, *planted_options, "node");

  auto typed_options = std::make_shared<io::TypedPlantedOptions>();
  CLI::App* typed = add_generator<io::TypedPlantedOptions>(
      generate, "typed-planted",
      "Typed graph (items, users; likes / liked_by / related edges) with planted per-relation "
      "preferences: item classes are told by the users who like them, not by related items",
      typed_options, io::generate_typed_planted, "typed-planted");
  typed->add_option("--num-items", typed_options->num_items, "Number of item nodes (labelled)");
  typed->add_option("--num-users", typed_options->num_users, "Number of user nodes");
  typed->add_option("--num-classes", typed_options->num_classes, "Number of item classes");
  typed->add_option("--likes-per-user", typed_options->likes_per_user,
                    "user -likes-> item edges each");
  typed->add_option("--preference", typed_options->preference,
                    "Probability that a like goes to an item of the user's preferred class");
  typed->add_option("--related-per-item", typed_options->related_per_item,
                    "item -related-> item edges per item, to uniform random items (noise)");
  add_planted_flags(typed, *typed_options, "item");

  auto rmat_options = std::make_shared<io::RmatOptions>();
  CLI::App* rmat = add_generator<io::RmatOptions>(
      generate, "rmat", "R-MAT graph (Graph500 a=.57 b=.19 c=.19) with random features and labels",
      rmat_options, io::generate_rmat, "rmat-<scale>");
  rmat->add_option("--scale", rmat_options->scale, "log2 of the number of nodes");
  rmat->add_option("--edge-factor", rmat_options->edge_factor, "Edges per node");
  rmat->add_option("--a", rmat_options->a, "R-MAT probability of the top-left quadrant");
  rmat->add_option("--b", rmat_options->b, "R-MAT probability of the top-right quadrant");
  rmat->add_option("--c", rmat_options->c, "R-MAT probability of the bottom-left quadrant");
  rmat->add_option("--feat-dim", rmat_options->feat_dim, "Feature dimension");
  rmat->add_option("--num-classes", rmat_options->num_classes, "Number of label classes");
  rmat->add_option("--train-fraction", rmat_options->train_fraction,
                   "Share of nodes in each of train, valid and test");
  rmat->add_option("--seed", rmat_options->seed, "Random seed");
}

}  // namespace graphloom::cli
