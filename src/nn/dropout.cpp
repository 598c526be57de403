// Dropout forward and backward share one mask generator (dropout_mask.h).
#include "graphloom/nn/dropout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstring>
#include <mutex>

#include "dropout_mask.h"
#include "graphloom/base/cpu_dispatch.h"
#include "graphloom/base/error.h"
#include "graphloom/base/random.h"
#include "graphloom/nn/sparse_ops.h"

namespace graphloom::nn {
namespace {

using detail::apply_dropout_mask;
using detail::kMaskChunk;
using detail::next_dropout_key;
using detail::relu_dropout_gradient;

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// y[i] = x[i] * scale where kept, else 0, for the `count` <= kMaskChunk elements of a chunk
// whose draws come from `stream`. Each element gets 16 random bits (p is resolved to 1/65536);
// the comparison loop is branch-free and vectorizes. With Relu, y[i] = max(x[i], 0) * scale
// where kept, and bit i % 64 of words[i / 64] says whether y[i] > 0.
template <bool Relu, typename T>
GRAPHLOOM_CPU_DISPATCH void mask_chunk(const T* x, T* y, int64_t count, uint64_t stream,
                                       uint16_t threshold, T scale, uint64_t* words) {
  // The generator's serial draws first, then loops that vectorize (compare, select, multiply)
  // instead of a random 50% branch per element.
  RandomStream rng(stream);
  uint16_t draws[kMaskChunk];
  for (int64_t k = 0; k < kMaskChunk; k += 4) {
    const uint64_t word = rng.next();
    std::memcpy(draws + k, &word, sizeof(word));
  }
  if constexpr (Relu) {
    for (int64_t j = 0; j < count; ++j) {
      y[j] = std::max(x[j], T(0)) * (draws[j] >= threshold ? scale : T(0));
    }
    for (int64_t w = 0; w * 64 < count; ++w) {
      uint64_t bits = 0;
      const int64_t end = std::min<int64_t>(64, count - w * 64);
      for (int64_t i = 0; i < end; ++i) bits |= static_cast<uint64_t>(y[w * 64 + i] > 0) << i;
      words[w] = bits;
    }
  } else {
    for (int64_t j = 0; j < count; ++j) y[j] = x[j] * (draws[j] >= threshold ? scale : T(0));
  }
}

// Element 0 of `in` is element first_chunk * kMaskChunk of the masked tensor.
template <bool Relu, typename T>
void apply_mask(const T* in, T* out, int64_t n, int64_t first_chunk, uint64_t key, double p,
                uint64_t* positive) {
  const auto threshold = static_cast<uint16_t>(std::min(65535.0, p * 65536.0));
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  const int64_t chunks = (n + kMaskChunk - 1) / kMaskChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kMaskChunk;
    // kMaskChunk is a multiple of 64: a chunk's bits are whole words
    mask_chunk<Relu>(in + begin, out + begin, std::min(n - begin, kMaskChunk),
                     stream_key({key, static_cast<uint64_t>(first_chunk + c)}), threshold, scale,
                     Relu ? positive + begin / 64 : nullptr);
  }
}

// grad_x[i] = grad_y[i] * scale where bit i of the words is set, else 0, for count <= 64 *
// kGradientWords elements.
constexpr int64_t kGradientWords = 64;

template <typename T>
GRAPHLOOM_CPU_DISPATCH void relu_dropout_gradient_chunk(const uint64_t* positive, const T* grad_y,
                                                        int64_t count, T scale, T* grad_x) {
  for (int64_t w = 0; w * 64 < count; ++w) {
    // A word's bits -> per-element factors, then one multiply: loops without branches.
    T factor[64];
    for (int64_t i = 0; i < 64; ++i) factor[i] = static_cast<T>((positive[w] >> i) & 1) * scale;
    const int64_t begin = w * 64;
    const int64_t end = std::min<int64_t>(64, count - begin);
    for (int64_t i = 0; i < end; ++i) grad_x[begin + i] = grad_y[begin + i] * factor[i];
  }
}

template <typename T>
void relu_dropout_gradient_kernel(const uint64_t* positive, const T* grad_y, int64_t n, double p,
                                  T* grad_x) {
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  constexpr int64_t kChunk = 64 * kGradientWords;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kChunk;
    relu_dropout_gradient_chunk(positive + begin / 64, grad_y + begin, std::min(n - begin, kChunk),
                                scale, grad_x + begin);
  }
}

// The dropout of x; with `positive`, of relu(x), and a bit per element there saying where the
// output is positive: all backward needs (a positive output was kept and had a positive input).
at::Tensor masked(const at::Tensor& x, uint64_t key, double p, at::Tensor* positive = nullptr) {
  const at::Tensor in = x.contiguous();
  at::Tensor out = at::empty_like(in);
  if (positive != nullptr) *positive = at::empty({(in.numel() + 63) / 64}, at::kLong);
  apply_dropout_mask(
      in, out, 0, key, p,
      positive != nullptr ? reinterpret_cast<uint64_t*>(positive->data_ptr<int64_t>()) : nullptr);
  return out;
}

at::Tensor relu_dropout_backward(const at::Tensor& positive, const at::Tensor& grad_y, double p) {
  const at::Tensor grad = grad_y.contiguous();
  at::Tensor grad_x = at::empty_like(grad);
  relu_dropout_gradient(reinterpret_cast<const uint64_t*>(positive.data_ptr<int64_t>()), grad, 0, p,
                        grad_x);
  return grad_x;
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

class ReluDropoutFunction : public torch::autograd::Function<ReluDropoutFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t key, double p) {
    at::Tensor positive;
    at::Tensor y = masked(x, static_cast<uint64_t>(key), p, &positive);
    ctx->saved_data["p"] = p;
    ctx->save_for_backward({positive});
    return y;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const at::Tensor positive = ctx->get_saved_variables()[0];
    return {
        relu_dropout_backward(positive, grad_outputs[0], ctx->saved_data["p"].toDouble()), {}, {}};
  }
};

}  // namespace

namespace detail {

uint64_t next_dropout_key() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get<at::CPUGeneratorImpl>()->random64();
}

void apply_dropout_mask(const at::Tensor& in, const at::Tensor& out, int64_t first, uint64_t key,
                        double p, uint64_t* positive) {
  GL_CHECK(first % kMaskChunk == 0, "a dropout mask range starts at {}, not a multiple of {}",
           first, kMaskChunk);
  AT_DISPATCH_FLOATING_TYPES(in.scalar_type(), "fast_dropout", [&] {
    if (positive != nullptr) {
      apply_mask<true>(in.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), in.numel(),
                       first / kMaskChunk, key, p, positive + first / 64);
    } else {
      apply_mask<false>(in.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), in.numel(),
                        first / kMaskChunk, key, p, nullptr);
    }
  });
}

void relu_dropout_gradient(const uint64_t* positive, const at::Tensor& grad_y, int64_t first,
                           double p, const at::Tensor& grad_x) {
  GL_CHECK(first % 64 == 0, "a dropout gradient range starts at {}, not a multiple of 64", first);
  AT_DISPATCH_FLOATING_TYPES(grad_y.scalar_type(), "relu_dropout_backward", [&] {
    relu_dropout_gradient_kernel(positive + first / 64, grad_y.data_ptr<scalar_t>(), grad_y.numel(),
                                 p, grad_x.data_ptr<scalar_t>());
  });
}

}  // namespace detail

at::Tensor fast_dropout(const at::Tensor& x, double p, bool training) {
  GL_CHECK(p >= 0 && p < 1, "dropout probability must be in [0, 1), got {}", p);
  if (!training || p == 0) return x;
  if (!use_native_kernels(x)) return at::dropout(x, p, /*train=*/true);
  return DropoutFunction::apply(full_precision(x), static_cast<int64_t>(next_dropout_key()), p);
}

at::Tensor relu_dropout(const at::Tensor& x, double p, bool training) {
  GL_CHECK(p >= 0 && p < 1, "dropout probability must be in [0, 1), got {}", p);
  if (!training) return at::relu(x);
  if (!use_native_kernels(x)) return at::dropout(at::relu(x), p, /*train=*/true);
  // With p = 0 every element is kept (no key drawn, as fast_dropout): still one bit saved
  // per element instead of relu's saved output.
  const uint64_t key = p > 0 ? next_dropout_key() : 0;
  return ReluDropoutFunction::apply(full_precision(x), static_cast<int64_t>(key), p);
}

}  // namespace graphloom::nn
