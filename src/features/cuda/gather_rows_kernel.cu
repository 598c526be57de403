// Zero-copy (UVA) row gathering: a kernel reads rows of a registered host matrix over PCIe or
// NVLink-C2C straight into device memory, so the CPU neither gathers nor stages them
// (PyTorch-Direct; GraphBolt's pinned features). One warp per row, each lane copying words of
// the widest size that the row size and the alignment of both ends allow.
#include <algorithm>

#include "gather_rows_kernel.h"

namespace graphloom::features::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;

template <typename Word>
__global__ void gather_rows(const Word* __restrict__ table, const int64_t* __restrict__ ids,
                            int64_t num_ids, int64_t words_per_row, Word* __restrict__ out) {
  const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  for (int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
       i < num_ids; i += warps) {
    const Word* row = table + ids[i] * words_per_row;
    Word* dst = out + i * words_per_row;
    for (int64_t w = lane; w < words_per_row; w += kWarp) dst[w] = row[w];
  }
}

template <typename Word>
cudaError_t launch(const void* table, const int64_t* ids, int64_t num_ids, int64_t row_bytes,
                   void* out, cudaStream_t stream) {
  constexpr int64_t kRowsPerBlock = kThreads / kWarp;
  // Enough blocks to fill any device; the loop strides over the rest.
  const int64_t blocks = std::min<int64_t>((num_ids + kRowsPerBlock - 1) / kRowsPerBlock, 65535);
  gather_rows<Word><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const Word*>(table), ids, num_ids, row_bytes / int64_t{sizeof(Word)},
      static_cast<Word*>(out));
  return cudaGetLastError();
}

bool word_fits(const void* table, const void* out, int64_t row_bytes, std::size_t word) {
  return row_bytes % static_cast<int64_t>(word) == 0 &&
         reinterpret_cast<uintptr_t>(table) % word == 0 &&
         reinterpret_cast<uintptr_t>(out) % word == 0;
}

}  // namespace

cudaError_t launch_gather_rows(const void* table, const int64_t* ids, int64_t num_ids,
                               int64_t row_bytes, void* out, cudaStream_t stream) {
  if (num_ids == 0 || row_bytes == 0) return cudaSuccess;
  if (word_fits(table, out, row_bytes, sizeof(int4)))
    return launch<int4>(table, ids, num_ids, row_bytes, out, stream);
  if (word_fits(table, out, row_bytes, sizeof(uint32_t)))
    return launch<uint32_t>(table, ids, num_ids, row_bytes, out, stream);
  return launch<unsigned char>(table, ids, num_ids, row_bytes, out, stream);
}

}  // namespace graphloom::features::cuda
