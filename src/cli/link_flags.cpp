// `train --task link`: the link-prediction flags.
#include "commands.h"
#include "flag_checks.h"

namespace graphloom::cli {

void add_link_flags(CLI::App* cmd, train::LinkOptions& link) {
  add_enum_option(cmd, "--scorer", link.scorer,
                  "Pair score: dot (product of the two embeddings) or mlp (on their element-wise "
                  "product)");
  add_enum_option(cmd, "--loss", link.loss,
                  "bce (positives 1, negatives 0) or bpr (each positive above its negatives)");
  cmd->add_option("--negatives", link.negatives, "Negative pairs per positive edge")
      ->check(positive());
  add_enum_option(cmd, "--negative-sampler", link.negative_sampler,
                  "Negative destinations: uniform, or degree (degree^0.75, harder)");
  cmd->add_flag("--bias", link.destination_bias,
                "Learn a bias per destination node added to every score (a popularity prior: "
                "queries with no training pairs then rank popular candidates first)");
  cmd->add_option("--recency-half-life", link.recency_half_life_days,
                  "Time-aware training, in days: each epoch draws its training pairs with "
                  "probability halving per this many days before the latest one (needs pair "
                  "times in unix seconds, e.g. a MovieLens import or its partitions); 0 draws "
                  "every pair once")
      ->check(non_negative());
  cmd->add_flag("--popularity-prior", link.popularity_prior,
                "Add log(1 + the destination's training pair count) times a learned scale to "
                "every score, the count recency-weighted with --recency-half-life: queries "
                "with no training pairs rank by (recent) popularity");
  cmd->add_option("--hits-k", link.hits_k, "K of the Hits@K reported on the test split")
      ->check(positive());
}

}  // namespace graphloom::cli
