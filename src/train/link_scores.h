// Scores of held-out pairs from node embeddings, internal to link prediction: evaluation
// embeds every node once, then scores any number of pairs from those rows.
#pragma once

#include <ATen/core/Tensor.h>

#include "link_model.h"

namespace graphloom::train {

// Scores of pairs of rows `u`, `v` (any device) on the model's device, returned to the CPU: in
// chunks on a GPU, so that evaluation over many pairs stays within its memory.
at::Tensor scores_of_rows(LinkModel& model, const at::Tensor& u, const at::Tensor& v,
                          const at::Tensor& v_ids);

// Scores of `pairs` [M, 2] from every node's embedding (on the CPU).
at::Tensor pair_scores(LinkModel& model, const at::Tensor& embeddings, const at::Tensor& pairs);

}  // namespace graphloom::train
