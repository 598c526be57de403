// Scores of pairs from node embeddings (link_scores.h).
#include "link_scores.h"

#include <torch/torch.h>

#include <vector>

namespace graphloom::train {

at::Tensor scores_of_rows(LinkModel& model, const at::Tensor& u, const at::Tensor& v,
                          const at::Tensor& v_ids) {
  torch::NoGradGuard no_grad;
  const c10::Device device = model.device();
  if (device.is_cpu()) return model.score(u, v, v_ids);
  constexpr int64_t kChunk = 1 << 16;
  std::vector<at::Tensor> chunks;
  for (int64_t begin = 0; begin < u.size(0); begin += kChunk) {
    const int64_t length = std::min(kChunk, u.size(0) - begin);
    chunks.push_back(model
                         .score(u.narrow(0, begin, length).to(device),
                                v.narrow(0, begin, length).to(device),
                                v_ids.narrow(0, begin, length).to(device))
                         .to(at::kFloat)
                         .cpu());
  }
  return chunks.empty() ? at::empty({0}, at::kFloat) : at::cat(chunks);
}

at::Tensor pair_scores(LinkModel& model, const at::Tensor& embeddings, const at::Tensor& pairs) {
  const at::Tensor dst = pairs.select(1, 1).contiguous();
  return scores_of_rows(model, embeddings.index_select(0, pairs.select(1, 0)),
                        embeddings.index_select(0, dst), dst);
}

}  // namespace graphloom::train
