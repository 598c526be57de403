// Blocks and mini-batches (block.h): their sizes, and their move to a device.
#include "graphloom/sampling/block.h"

#include <ATen/ATen.h>

namespace graphloom::sampling {
namespace {

at::Tensor moved(const at::Tensor& t, c10::Device device, bool non_blocking) {
  return t.defined() ? t.to(device, non_blocking) : t;
}

}  // namespace

int64_t MiniBatch::num_sampled_edges() const {
  int64_t total = 0;
  for (const Block& block : blocks) total += block.num_edges();
  return total;
}

Block to_device(const Block& block, c10::Device device, bool non_blocking) {
  Block out = block;
  for (at::Tensor* t : {&out.src_ids, &out.indptr, &out.indices, &out.edge_ids, &out.edge_types,
                        &out.edge_weights}) {
    *t = moved(*t, device, non_blocking);
  }
  return out;
}

MiniBatch map_tensors(const MiniBatch& batch,
                      const std::function<at::Tensor(const at::Tensor&)>& fn) {
  const auto apply = [&fn](at::Tensor& t) {
    if (t.defined()) t = fn(t);
  };
  MiniBatch out = batch;
  apply(out.seeds);
  for (at::Tensor* t : {&out.pairs.src, &out.pairs.dst, &out.pairs.negative_dst,
                        &out.pairs.negative_src, &out.pairs.position, &out.pairs.input_id,
                        &out.labels, &out.pyg.edge_index, &out.pyg.edge_ids}) {
    apply(*t);
  }
  for (Block& block : out.blocks) {
    for (at::Tensor* t : {&block.src_ids, &block.indptr, &block.indices, &block.edge_ids,
                          &block.edge_types, &block.edge_weights}) {
      apply(*t);
    }
  }
  for (auto& [name, rows] : out.features) apply(rows);
  return out;
}

MiniBatch to_device(const MiniBatch& batch, c10::Device device, bool non_blocking) {
  return map_tensors(batch, [&](const at::Tensor& t) { return t.to(device, non_blocking); });
}

}  // namespace graphloom::sampling
