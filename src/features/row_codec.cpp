// Row decoding kernels: eight values at a time widened to float32 with AVX2/F16C where the CPU
// has them (every x86 server of the last decade), a scalar loop otherwise.
#include "graphloom/features/row_codec.h"

#include <ATen/ATen.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <cpuid.h>
#include <immintrin.h>

#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"

namespace graphloom::features {
namespace {

constexpr int64_t kChunkRows = 65536;

bool is_storage_dtype(c10::ScalarType dtype) {
  return dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16 || dtype == at::kChar;
}

template <typename T>
float to_float(T value) {
  return static_cast<float>(value);
}

template <typename T>
void decode_row_scalar(const T* from, float* to, int64_t dim, float scale) {
  for (int64_t j = 0; j < dim; ++j) to[j] = to_float(from[j]) * scale;
}

template <typename T>
__attribute__((target("avx2,f16c"))) __m256 load8(const T* from) {
  if constexpr (std::is_same_v<T, float>) {
    return _mm256_loadu_ps(from);
  } else if constexpr (std::is_same_v<T, c10::Half>) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from)));
  } else if constexpr (std::is_same_v<T, c10::BFloat16>) {
    // bfloat16 is the upper half of a float32: widen and shift into place.
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  } else {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(from));
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
  }
}

template <typename T>
__attribute__((target("avx2,f16c"))) void decode_row_avx2(const T* from, float* to, int64_t dim,
                                                          float scale) {
  const __m256 factor = _mm256_set1_ps(scale);
  int64_t j = 0;
  for (; j + 8 <= dim; j += 8) _mm256_storeu_ps(to + j, _mm256_mul_ps(load8(from + j), factor));
  for (; j < dim; ++j) to[j] = to_float(from[j]) * scale;
}

// AVX2 and F16C (the half-precision conversions). Read from CPUID: clang 14's
// __builtin_cpu_supports does not know "f16c".
bool has_avx2_and_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  return f16c && __builtin_cpu_supports("avx2");
}

template <typename T>
void gather_decoded(const T* values, const float* row_scale, const int64_t* id, int64_t n,
                    int64_t dim, float* out) {
  static const bool vector = has_avx2_and_f16c();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = id[i];
    const float scale = row_scale != nullptr ? row_scale[row] : 1.0f;
    if (vector) {
      decode_row_avx2(values + row * dim, out + i * dim, dim, scale);
    } else {
      decode_row_scalar(values + row * dim, out + i * dim, dim, scale);
    }
  }
}

}  // namespace

bool decodes_to_float(c10::ScalarType values, bool has_row_scale) {
  return values == at::kHalf || values == at::kBFloat16 ||
         (has_row_scale && is_storage_dtype(values));
}

EncodedRows encode_rows(const at::Tensor& table, c10::ScalarType dtype) {
  GL_CHECK(table.dim() == 2 && table.is_floating_point(),
           "encoding needs a float [rows, dim] table, got {} {}", dtype_name(table.scalar_type()),
           table.sizes());
  GL_CHECK(is_storage_dtype(dtype),
           "features can be stored as float32, float16, bfloat16 or int8, not {}",
           dtype_name(dtype));
  const int64_t n = table.size(0);
  EncodedRows encoded{at::empty(table.sizes(), dtype), {}};
  if (dtype == at::kChar) encoded.row_scale = at::empty({n}, at::kFloat);
  for (int64_t begin = 0; begin < n; begin += kChunkRows) {
    const int64_t end = std::min(n, begin + kChunkRows);
    const at::Tensor chunk = table.slice(0, begin, end).to(at::kFloat);
    if (dtype != at::kChar) {
      encoded.values.slice(0, begin, end).copy_(chunk);
      continue;
    }
    // Symmetric per-row quantization: the largest magnitude maps to 127; all-zero rows keep 1.
    at::Tensor scale = std::get<0>(chunk.abs().max(1)) / 127.0f;
    scale.masked_fill_(scale == 0, 1.0f);
    encoded.values.slice(0, begin, end)
        .copy_((chunk / scale.unsqueeze(1)).round_().clamp_(-127, 127));
    encoded.row_scale.slice(0, begin, end).copy_(scale);
  }
  return encoded;
}

void gather_decoded_rows(const EncodedRows& rows, const at::Tensor& ids, at::Tensor& out) {
  const at::Tensor& values = rows.values;
  GL_CHECK(values.dim() == 2 && values.is_contiguous() && is_storage_dtype(values.scalar_type()),
           "decoded gather needs a contiguous float32/float16/bfloat16/int8 [rows, dim] table");
  GL_CHECK(!rows.row_scale.defined() ||
               (rows.row_scale.scalar_type() == at::kFloat && rows.row_scale.is_contiguous() &&
                rows.row_scale.numel() == values.size(0)),
           "row scale must be a contiguous float32 tensor with one value per row");
  GL_CHECK(out.scalar_type() == at::kFloat && out.is_contiguous() && out.dim() == 2 &&
               out.size(0) == ids.numel() && out.size(1) == values.size(1),
           "decoded gather writes a contiguous float32 [{}, {}] tensor", ids.numel(),
           values.size(1));
  const float* scale = rows.row_scale.defined() ? rows.row_scale.data_ptr<float>() : nullptr;
  const int64_t* id = ids.data_ptr<int64_t>();
  const int64_t n = ids.numel();
  const int64_t dim = values.size(1);
  float* target = out.data_ptr<float>();
  switch (values.scalar_type()) {
    case at::kFloat:
      return gather_decoded(values.data_ptr<float>(), scale, id, n, dim, target);
    case at::kHalf:
      return gather_decoded(values.data_ptr<c10::Half>(), scale, id, n, dim, target);
    case at::kBFloat16:
      return gather_decoded(values.data_ptr<c10::BFloat16>(), scale, id, n, dim, target);
    default:
      return gather_decoded(values.data_ptr<int8_t>(), scale, id, n, dim, target);
  }
}

at::Tensor row_normalizing_scale(const EncodedRows& rows) {
  const int64_t n = rows.values.size(0);
  at::Tensor scale = rows.row_scale.defined() ? rows.row_scale.clone() : at::ones({n}, at::kFloat);
  for (int64_t begin = 0; begin < n; begin += kChunkRows) {
    const int64_t end = std::min(n, begin + kChunkRows);
    at::Tensor part = scale.slice(0, begin, end);
    const at::Tensor sums = rows.values.slice(0, begin, end).to(at::kFloat).sum(1) * part;
    part.div_(sums.clamp_min(1e-12));
  }
  return scale;
}

}  // namespace graphloom::features
