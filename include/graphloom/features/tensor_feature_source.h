// FeatureSource over named in-memory or memory-mapped tensors (rows = nodes), stored as they
// are or encoded (row_codec.h: 16-bit floats, int8 with a row scale), then decoded on gather.
#pragma once

#include <map>

#include "graphloom/features/feature_source.h"
#include "graphloom/features/row_codec.h"

namespace graphloom::features {

class TensorFeatureSource : public FeatureSource {
 public:
  TensorFeatureSource() = default;
  explicit TensorFeatureSource(std::map<std::string, at::Tensor> tensors);

  // Adds (or replaces) `name`; the tensor must be contiguous in its rows. With a float32
  // `row_scale` [rows] (or 16-bit float storage) rows are decoded to float32 on gather.
  void add(const std::string& name, at::Tensor tensor, at::Tensor row_scale = {});

  bool has(const std::string& name) const override;
  FeatureInfo info(const std::string& name) const override;
  using FeatureSource::gather;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override;
  EncodedRows encoded_table(const std::string& name) const override { return table(name); }

 private:
  const EncodedRows& table(const std::string& name) const;
  std::map<std::string, EncodedRows> tables_;
};

// The row-gather kernel: out[i] = table[ids[i]] for any dtype, rows copied in parallel; with
// `positions` (int64, one per id), out[positions[i]] = table[ids[i]] instead. `table` and `out`
// must be contiguous with equal row sizes; ids and positions are trusted (checked by callers).
void gather_rows(const at::Tensor& table, const at::Tensor& ids, at::Tensor& out,
                 const at::Tensor& positions = {});

}  // namespace graphloom::features
