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
  for (at::Tensor* t : {&out.src_ids, &out.indptr, &out.indices, &out.edge_ids, &out.edge_types}) {
    *t = moved(*t, device, non_blocking);
  }
  return out;
}

MiniBatch to_device(const MiniBatch& batch, c10::Device device, bool non_blocking) {
  MiniBatch out = batch;
  out.seeds = moved(batch.seeds, device, non_blocking);
  for (at::Tensor* t : {&out.pairs.src, &out.pairs.dst, &out.pairs.negative_dst,
                        &out.pairs.negative_src, &out.pairs.position, &out.pairs.input_id,
                        &out.labels, &out.pyg.edge_index, &out.pyg.edge_ids}) {
    *t = moved(*t, device, non_blocking);
  }
  for (Block& block : out.blocks) block = to_device(block, device, non_blocking);
  for (auto& [name, rows] : out.features) rows = moved(rows, device, non_blocking);
  return out;
}

}  // namespace graphloom::sampling
