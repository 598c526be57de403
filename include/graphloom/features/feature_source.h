// FeatureSource: where mini-batches read node rows (features, labels) (DESIGN.md section 1).
// Local tensors, caches, compressed stores and the distributed tensor all implement it.
#pragma once

#include <ATen/core/Tensor.h>

#include "graphloom/features/row_codec.h"

#include <string>
#include <vector>

namespace graphloom::features {

struct FeatureInfo {
  c10::ScalarType dtype;
  std::vector<int64_t> row_shape;  // shape of one row: {} for labels, {dim} for features
  int64_t num_rows;
};

class FeatureSource {
 public:
  virtual ~FeatureSource() = default;
  virtual bool has(const std::string& name) const = 0;
  // Throws graphloom::Error naming `name` when it does not exist.
  virtual FeatureInfo info(const std::string& name) const = 0;
  // Writes the rows `ids` (int64) of `name` into `out` ([ids.numel(), row_shape...], contiguous,
  // of the feature's dtype). Throws graphloom::Error for ids out of range or a wrong `out`.
  virtual void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const = 0;

  // Allocates the output and gathers into it.
  at::Tensor gather(const std::string& name, const at::Tensor& ids) const;

  // The whole of `name` as stored (values and row scale, row i at i), when this source holds it
  // in this process's memory (no remote rows, not read from disk); values undefined otherwise.
  // A device can then hold or read the encoded rows and decode them itself.
  virtual EncodedRows encoded_table(const std::string& /*name*/) const { return {}; }
  // The encoded table when its rows need no decoding (gathered as stored); undefined otherwise.
  // A consumer that can read rows through an index (a model's first layer) then needs no
  // gathered copy.
  at::Tensor whole_table(const std::string& name) const;
};

}  // namespace graphloom::features
