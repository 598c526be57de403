// OpenBLAS is opened with RTLD_LOCAL | RTLD_DEEPBIND: libtorch_cpu exports MKL's BLAS under the
// same names (sgemm_, cblas_sgemm, ...), so neither library may see the other's symbols; only
// cblas_sgemm is taken, by dlsym. Debian's OpenMP build of OpenBLAS runs on the process's one
// libgomp (libtorch's, already loaded under the same soname), so its threads are the OpenMP
// pool's and follow graphloom's thread count. GRAPHLOOM_BLAS=torch keeps libtorch's BLAS.
#include "dense_product.h"

#include <dlfcn.h>

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "graphloom/base/error.h"

namespace graphloom::nn::detail {
namespace {

// cblas.h's values, fixed by the CBLAS standard.
constexpr int kRowMajor = 101;
constexpr int kNoTrans = 111;
constexpr int kTrans = 112;
using Sgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float* a, int lda, const float* b, int ldb, float beta, float* c,
                       int ldc);

struct OpenBlas {
  Sgemm sgemm = nullptr;
  std::string name = "libtorch's";
};

const OpenBlas& openblas() {
  static const OpenBlas loaded = [] {
    OpenBlas blas;
#if defined(GRAPHLOOM_OPENBLAS_LIBRARY) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)  // the sanitizers' runtimes refuse RTLD_DEEPBIND
    const char* choice = std::getenv("GRAPHLOOM_BLAS");
    if (choice != nullptr && std::strcmp(choice, "torch") == 0) return blas;
    void* library = ::dlopen(GRAPHLOOM_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (library == nullptr) {
      spdlog::debug("OpenBLAS not loaded ({}): dense products use libtorch's BLAS", ::dlerror());
      return blas;
    }
    blas.sgemm = reinterpret_cast<Sgemm>(::dlsym(library, "cblas_sgemm"));
    using Config = const char* (*)();
    const auto config = reinterpret_cast<Config>(::dlsym(library, "openblas_get_config"));
    blas.name = config != nullptr ? std::string("OpenBLAS (") + config() + ")" : "OpenBLAS";
    if (blas.sgemm == nullptr) blas.name = "libtorch's";
#endif
    return blas;
  }();
  return loaded;
}

// A matrix as BLAS sees it: rows contiguous (kNoTrans) or columns contiguous (kTrans).
bool blas_layout(const at::Tensor& m, int* trans, int* leading) {
  if (m.stride(1) == 1 && m.stride(0) >= std::max<int64_t>(1, m.size(1))) {
    *trans = kNoTrans;
    *leading = static_cast<int>(m.stride(0));
    return true;
  }
  if (m.stride(0) == 1 && m.stride(1) >= std::max<int64_t>(1, m.size(0))) {
    *trans = kTrans;
    *leading = static_cast<int>(m.stride(1));
    return true;
  }
  return false;
}

}  // namespace

void product_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b,
                  bool accumulate) {
  const Sgemm sgemm = openblas().sgemm;
  int trans_a = 0, trans_b = 0, lda = 0, ldb = 0;
  const bool fits = sgemm != nullptr && out.is_cpu() && a.is_cpu() && b.is_cpu() &&
                    a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat &&
                    out.scalar_type() == at::kFloat && a.size(0) > 0 && a.size(1) > 0 &&
                    b.size(1) > 0 && out.stride(1) == 1 &&
                    out.stride(0) >= std::max<int64_t>(1, out.size(1)) &&
                    blas_layout(a, &trans_a, &lda) && blas_layout(b, &trans_b, &ldb) &&
                    std::max({a.numel(), b.numel(), out.numel()}) < (int64_t{1} << 31);
  if (!fits) {
    at::Tensor target = out;
    if (accumulate) {
      target.addmm_(a, b);
    } else {
      at::mm_out(target, a, b);
    }
    return;
  }
  GL_CHECK(out.size(0) == a.size(0) && out.size(1) == b.size(1) && a.size(1) == b.size(0),
           "product of [{}, {}] and [{}, {}] into [{}, {}]", a.size(0), a.size(1), b.size(0),
           b.size(1), out.size(0), out.size(1));
  sgemm(kRowMajor, trans_a, trans_b, static_cast<int>(a.size(0)), static_cast<int>(b.size(1)),
        static_cast<int>(a.size(1)), 1.0f, a.data_ptr<float>(), lda, b.data_ptr<float>(), ldb,
        accumulate ? 1.0f : 0.0f, out.data_ptr<float>(), static_cast<int>(out.stride(0)));
}

}  // namespace graphloom::nn::detail

namespace graphloom::nn {

std::string dense_product_blas() { return detail::openblas().name; }

}  // namespace graphloom::nn
