// Sparse Adagrad (as torch.optim.Adagrad, per element) and Adam with a step count per row
// (rows are updated only when sampled, so one global step would over-correct rare rows).
#include "sparse_optimizer.h"

#include <cmath>

namespace graphloom::distributed {

void apply_sparse_step(const SparseStep& step, const SparseRows& state, const int64_t* row,
                       const float* grads, int64_t count, RowLocks& locks) {
  const bool adam = step.optimizer == "adam";
  const int64_t dim = state.dim;
  for (int64_t i = 0; i < count; ++i) {
    std::lock_guard row_lock(locks[static_cast<std::size_t>(row[i]) % locks.size()]);
    float* w = state.weight + row[i] * dim;
    float* m = state.first + row[i] * dim;
    const float* g = grads + i * dim;
    if (!adam) {
      for (int64_t d = 0; d < dim; ++d) {
        m[d] += g[d] * g[d];
        w[d] -= step.lr * g[d] / (std::sqrt(m[d]) + step.eps);
      }
      continue;
    }
    float* v = state.second + row[i] * dim;
    const float t = state.steps[row[i]] += 1.0f;
    const float correction1 = 1.0f - std::pow(step.beta1, t);
    const float correction2 = 1.0f - std::pow(step.beta2, t);
    for (int64_t d = 0; d < dim; ++d) {
      m[d] = step.beta1 * m[d] + (1 - step.beta1) * g[d];
      v[d] = step.beta2 * v[d] + (1 - step.beta2) * g[d] * g[d];
      w[d] -= step.lr * (m[d] / correction1) / (std::sqrt(v[d] / correction2) + step.eps);
    }
  }
}

}  // namespace graphloom::distributed
