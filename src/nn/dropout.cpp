// Dropout forward and backward share one mask generator: element i of a call keyed k is kept
// iff the i-th draw of chunk i / kChunk of stream (k, chunk) is >= p.
#include "graphloom/nn/dropout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/custom_function.h>

#include <mutex>

#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/nn/sparse_ops.h"

namespace graphloom::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

constexpr int64_t kChunk = 4096;

// out[i] = in[i] * scale where kept, else 0. Each element gets 16 random bits (p is resolved
// to 1/65536); the comparison loop is branch-free and vectorizes.
template <typename T>
void apply_mask(const T* in, T* out, int64_t n, uint64_t key, double p) {
  const auto threshold = static_cast<uint16_t>(std::min(65535.0, p * 65536.0));
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    RandomStream rng(stream_key({key, static_cast<uint64_t>(c)}));
    // Random bits -> a per-element factor (0 or scale), then one multiply: two simple loops
    // that vectorize, instead of a random 50% branch per element.
    T factor[kChunk];
    for (int64_t k = 0; k < kChunk; k += 4) {
      const uint64_t word = rng.next();
      for (int64_t i = 0; i < 4; ++i) {
        const auto draw = static_cast<uint32_t>((word >> (16 * i)) & 0xffff);
        factor[k + i] = draw >= threshold ? scale : T(0);
      }
    }
    const int64_t begin = c * kChunk;
    const int64_t count = std::min(n - begin, kChunk);
    const T* x = in + begin;
    T* y = out + begin;
    for (int64_t j = 0; j < count; ++j) y[j] = x[j] * factor[j];
  }
}

at::Tensor masked(const at::Tensor& x, uint64_t key, double p) {
  const at::Tensor in = x.contiguous();
  at::Tensor out = at::empty_like(in);
  AT_DISPATCH_FLOATING_TYPES(in.scalar_type(), "fast_dropout", [&] {
    apply_mask(in.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), in.numel(), key, p);
  });
  return out;
}

class DropoutFunction : public torch::autograd::Function<DropoutFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t key, double p) {
    ctx->saved_data["key"] = key;
    ctx->saved_data["p"] = p;
    return masked(x, static_cast<uint64_t>(key), p);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto key = static_cast<uint64_t>(ctx->saved_data["key"].toInt());
    return {masked(grad_outputs[0], key, ctx->saved_data["p"].toDouble()), {}, {}};
  }
};

uint64_t next_key() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get<at::CPUGeneratorImpl>()->random64();
}

}  // namespace

at::Tensor fast_dropout(const at::Tensor& x, double p, bool training) {
  GL_CHECK(p >= 0 && p < 1, "dropout probability must be in [0, 1), got {}", p);
  if (!training || p == 0) return x;
  return DropoutFunction::apply(full_precision(x), static_cast<int64_t>(next_key()), p);
}

}  // namespace graphloom::nn
