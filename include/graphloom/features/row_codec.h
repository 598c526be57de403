// Compressed and scaled feature rows. A table is stored as `values` (float32, float16, bfloat16
// or int8) and an optional float32 per-row `row_scale`; gathering decodes the requested rows
// into a float32 batch tensor (value x scale) in one pass, so the full-precision table never
// exists in memory. The same mechanism carries int8 quantization and lazy row normalization.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

namespace graphloom::features {

struct EncodedRows {
  at::Tensor values;     // [num_rows, dim]
  at::Tensor row_scale;  // float32 [num_rows], or undefined (scale 1)
};

// The name under which a feature's row scale travels next to it (graph servers, DistGraph).
inline std::string row_scale_name(const std::string& feature) { return feature + "-row-scale"; }

// Whether rows of this storage are decoded to float32 on gather (16-bit floats, or any
// supported storage with a row scale); otherwise they are copied as they are.
bool decodes_to_float(c10::ScalarType values, bool has_row_scale);

// Encodes a float [num_rows, dim] table as `dtype`: float16 / bfloat16 (rounded, no scale),
// int8 (symmetric per-row scale max|x| / 127), float32 (a copy). Works in chunks of rows so
// that a memory-mapped table is read once without a full-precision copy.
EncodedRows encode_rows(const at::Tensor& table, c10::ScalarType dtype);

// out[i] = float(values[ids[i]]) * row_scale[ids[i]] for float32 `out` [ids.numel(), dim].
// Ids are trusted (callers check the range); parallel over rows.
void gather_decoded_rows(const EncodedRows& rows, const at::Tensor& ids, at::Tensor& out);

// Per-row scale that turns rows into rows summing to 1 (the GCN papers' row normalization),
// folded into the existing scale: computed in one streaming pass, no copy of the table.
at::Tensor row_normalizing_scale(const EncodedRows& rows);

}  // namespace graphloom::features
