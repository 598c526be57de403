// `graphloom generate planted|typed-planted|rmat`: synthetic datasets. `generate planted` with no
// flags writes the embedded default dataset that the main job uses.
#include <memory>

#include "commands.h"
#include "graphloom/base/timer.h"
#include "graphloom/io/dataset.h"
#include "graphloom/io/generators.h"

namespace graphloom::cli {
namespace {

void write_generated(const io::Dataset& dataset, const std::string& out, bool force, Timer& timer) {
  const double generate_seconds = timer.seconds();
  io::save_dataset(dataset, out, force);
  fmt::print(
      "wrote {}: {} nodes, {} edges, {} classes (generated in {:.2f} s, written in {:.2f} s)\n",
      out, dataset.num_nodes(), dataset.graph.num_edges(), dataset.num_classes, generate_seconds,
      timer.seconds() - generate_seconds);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("generate", "Write a synthetic dataset directory");
  cmd->require_subcommand(1);

  struct Common {
    std::string out;
    bool force = false;
  };
  {
    auto options = std::make_shared<io::PlantedOptions>();
    auto common = std::make_shared<Common>(Common{.out = "planted"});
    CLI::App* planted = cmd->add_subcommand(
        "planted",
        "Planted-partition graph with class-centroid features (no flags: the embedded default "
        "dataset of the main job)");
    planted->add_option("--out", common->out, "Output directory");
    planted->add_flag("--force", common->force, "Replace the output directory if it exists");
    planted->add_option("--num-nodes", options->num_nodes, "Number of nodes");
    planted->add_option("--num-classes", options->num_classes, "Number of classes");
    planted->add_option("--avg-degree", options->avg_degree,
                        "Average degree (each generated edge is added in both directions)");
    planted->add_option("--homophily", options->homophily,
                        "Probability that a generated edge stays inside its class");
    planted->add_option("--feat-dim", options->feat_dim, "Feature dimension");
    planted->add_option("--feature-noise", options->feature_noise,
                        "Standard deviation of the noise added to the class centroid");
    planted->add_option("--train-fraction", options->train_fraction, "Share of train nodes");
    planted->add_option("--valid-fraction", options->valid_fraction, "Share of validation nodes");
    planted->add_option("--test-fraction", options->test_fraction, "Share of test nodes");
    planted->add_option("--seed", options->seed, "Random seed");
    planted->callback([options, common] {
      Timer timer;
      write_generated(io::generate_planted(*options), common->out, common->force, timer);
    });
  }
  {
    auto options = std::make_shared<io::TypedPlantedOptions>();
    auto common = std::make_shared<Common>(Common{.out = "typed-planted"});
    CLI::App* typed = cmd->add_subcommand(
        "typed-planted",
        "Typed graph (items, users; likes / liked_by / related edges) with planted per-relation "
        "preferences: item classes are told by the users who like them, not by related items");
    typed->add_option("--out", common->out, "Output directory");
    typed->add_flag("--force", common->force, "Replace the output directory if it exists");
    typed->add_option("--num-items", options->num_items, "Number of item nodes (labelled)");
    typed->add_option("--num-users", options->num_users, "Number of user nodes");
    typed->add_option("--num-classes", options->num_classes, "Number of item classes");
    typed->add_option("--likes-per-user", options->likes_per_user, "user -likes-> item edges each");
    typed->add_option("--preference", options->preference,
                      "Probability that a like goes to an item of the user's preferred class");
    typed->add_option("--related-per-item", options->related_per_item,
                      "item -related-> item edges per item, to uniform random items (noise)");
    typed->add_option("--feat-dim", options->feat_dim, "Feature dimension");
    typed->add_option("--feature-noise", options->feature_noise,
                      "Standard deviation of the noise added to an item's class centroid");
    typed->add_option("--train-fraction", options->train_fraction, "Share of items for training");
    typed->add_option("--valid-fraction", options->valid_fraction, "Share of items for validation");
    typed->add_option("--test-fraction", options->test_fraction, "Share of items for testing");
    typed->add_option("--seed", options->seed, "Random seed");
    typed->callback([options, common] {
      Timer timer;
      write_generated(io::generate_typed_planted(*options), common->out, common->force, timer);
    });
  }
  {
    auto options = std::make_shared<io::RmatOptions>();
    auto common = std::make_shared<Common>();
    CLI::App* rmat = cmd->add_subcommand(
        "rmat", "R-MAT graph (Graph500 a=.57 b=.19 c=.19) with random features and labels");
    rmat->add_option("--out", common->out, "Output directory (default: rmat-<scale>)");
    rmat->add_flag("--force", common->force, "Replace the output directory if it exists");
    rmat->add_option("--scale", options->scale, "log2 of the number of nodes");
    rmat->add_option("--edge-factor", options->edge_factor, "Edges per node");
    rmat->add_option("--a", options->a, "R-MAT probability of the top-left quadrant");
    rmat->add_option("--b", options->b, "R-MAT probability of the top-right quadrant");
    rmat->add_option("--c", options->c, "R-MAT probability of the bottom-left quadrant");
    rmat->add_option("--feat-dim", options->feat_dim, "Feature dimension");
    rmat->add_option("--num-classes", options->num_classes, "Number of label classes");
    rmat->add_option("--train-fraction", options->train_fraction,
                     "Share of nodes in each of train, valid and test");
    rmat->add_option("--seed", options->seed, "Random seed");
    rmat->callback([options, common] {
      Timer timer;
      const std::string out =
          common->out.empty() ? fmt::format("rmat-{}", options->scale) : common->out;
      write_generated(io::generate_rmat(*options), out, common->force, timer);
    });
  }
}

}  // namespace graphloom::cli
