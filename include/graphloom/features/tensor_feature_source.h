// FeatureSource over named in-memory or memory-mapped tensors (rows = nodes).
#pragma once

#include <map>

#include "graphloom/features/feature_source.h"

namespace graphloom::features {

class TensorFeatureSource : public FeatureSource {
 public:
  TensorFeatureSource() = default;
  explicit TensorFeatureSource(std::map<std::string, at::Tensor> tensors);

  // Adds (or replaces) `name`; the tensor must be contiguous in its rows.
  void add(const std::string& name, at::Tensor tensor);

  bool has(const std::string& name) const override;
  FeatureInfo info(const std::string& name) const override;
  using FeatureSource::gather;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override;

 private:
  const at::Tensor& tensor(const std::string& name) const;
  std::map<std::string, at::Tensor> tensors_;
};

// The row-gather kernel: out[i] = table[ids[i]] for any dtype, rows copied in parallel.
// `table` and `out` must be contiguous with equal row sizes; ids are trusted (checked by callers).
void gather_rows(const at::Tensor& table, const at::Tensor& ids, at::Tensor& out);

}  // namespace graphloom::features
