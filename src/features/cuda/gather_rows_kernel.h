// The zero-copy row gather kernel's launcher (internal to the features module). Plain CUDA
// runtime types only, so that nvcc compiles the kernel without ATen's or fmt's headers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace graphloom::features::cuda {

// out[i] = table[ids[i]] for rows of `row_bytes`; `table` and `out` are device-accessible
// pointers (a registered host matrix's device pointer, device memory) and `ids` lives on the
// device, each id already checked. Returns the launch's status.
cudaError_t launch_gather_rows(const void* table, const int64_t* ids, int64_t num_ids,
                               int64_t row_bytes, void* out, cudaStream_t stream);

}  // namespace graphloom::features::cuda
