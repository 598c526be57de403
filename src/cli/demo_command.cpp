// `graphloom demo`: the main job's flags (distributed/runtime/demo_job.h runs it).
#include <memory>

#include "commands.h"
#include "flag_checks.h"
#include "graphloom/distributed/runtime/demo_job.h"

namespace graphloom::cli {

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<distributed::DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo",
      "The whole system on this machine in about 2 minutes: generate a graph, partition it, "
      "start 2 loopback machines (graph servers + a trainer each) and train GraphSAGE "
      "data-parallel; prints accuracy, seeds/s, time per stage and where everything went");
  cmd->add_option("--out", options->out,
                  "Directory for the dataset, partition, checkpoint, metrics and the cluster's "
                  "token and ip config");
  cmd->add_flag("--force", options->force, "Replace --out if it exists");
  cmd->add_option("--num-nodes", options->num_nodes, "Nodes of the generated graph")
      ->check(in_range(1000, 1e8));
  cmd->add_option("--epochs", options->epochs, "Training epochs")->check(positive());
  cmd->add_option("--machines", options->machines, "Loopback machines, one part each")
      ->check(in_range(1, 8));
  cmd->add_option("--servers-per-machine", options->servers_per_machine,
                  "Graph servers per machine: a main server and backups sharing its memory")
      ->check(in_range(1, 8));
  cmd->add_option("--seed", options->seed, "Seed of the graph, the partition and training");
  cmd->callback([options] { exit_if_failed(distributed::run_demo(*options)); });
}

}  // namespace graphloom::cli
