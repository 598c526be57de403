// Layer-wise inference: for each layer, full one-hop blocks over batches of destinations.
#include "graphloom/train/inference.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "eval_mode.h"
#include "graphloom/base/error.h"
#include "graphloom/base/progress.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/nn/models.h"
#include "graphloom/sampling/neighbor_sampler.h"

namespace graphloom::train {
namespace {

// The chunk to try after `failed` destinations ran out of memory on `device`: half as many
// (kept for the chunks and layers that follow). One destination that does not fit is an error
// saying what to lower.
int64_t smaller_chunk(int64_t failed, const c10::Device& device, const c10::OutOfMemoryError& e) {
  if (failed <= 1) {
    const std::string what = e.what_without_backtrace();
    throw Error(fmt::format(
        "out of memory on {} in layer-wise inference, even one destination at a time ({}): "
        "lower --hidden, evaluate with --eval sampled, or train on the cpu",
        device.str(), what.substr(0, what.find('\n'))));
  }
  spdlog::warn("inference: {} destinations at a time do not fit on {}; trying {}", failed,
               device.str(), failed / 2);
  return failed / 2;
}

}  // namespace

at::Tensor layerwise_inference(nn::GnnModel& model, const sampling::NeighborSource& source,
                               const at::Tensor& features, int64_t batch_size, bool show_progress,
                               distributed::ProcessGroup* group) {
  GL_CHECK(features.size(0) == source.num_nodes(), "features have {} rows for {} nodes",
           features.size(0), source.num_nodes());
  const at::Tensor table = features.contiguous();
  const RowReader rows = [&](const at::Tensor& ids) {
    at::Tensor x = at::empty({ids.numel(), table.size(1)}, table.options());
    features::gather_rows(table, ids, x);
    return x;
  };
  return layerwise_inference(model, source, rows, batch_size, show_progress, group);
}

RowReader layerwise_inference(nn::GnnModel& model, const sampling::NeighborSource& source,
                              const RowReader& inputs, int64_t batch_size, bool show_progress,
                              distributed::ProcessGroup* group, const LayerOutputFactory& outputs) {
  GL_CHECK(batch_size > 0, "inference batch size must be positive, got {}", batch_size);
  const EvalModeScope eval(model);
  torch::NoGradGuard no_grad;
  // Nothing reads edge ids; without them remote parts send half the bytes.
  const sampling::NeighborSampler full(&source, {.fanouts = {-1}, .edge_ids = false});
  const int64_t n = source.num_nodes();
  const bool distributed = group != nullptr && group->world_size() > 1;
  const auto [first, last] = distributed
                                 ? distributed::rank_share(n, group->rank(), group->world_size())
                                 : std::pair{0L, n};
  show_progress = show_progress && (!distributed || group->rank() == 0);
  const int64_t batches = (last - first + batch_size - 1) / batch_size;
  RowReader layer_inputs = inputs;
  const c10::Device device = model.device();
  // Destinations per chunk: `batch_size`, halved for good when a chunk does not fit the
  // device (a hub's block is as big as its degree, whatever the batch size).
  int64_t chunk = batch_size;
  for (int64_t layer = 0; layer < model.num_layers(); ++layer) {
    ProgressBar progress(fmt::format("inference layer {}/{}", layer + 1, model.num_layers()),
                         batches, "batches");
    const LayerOutput out = outputs(layer, model.output_dim(layer));
    for (int64_t begin = first; begin < last;) {
      const int64_t end = std::min(last, begin + chunk);
      at::Tensor rows;
      try {
        const sampling::MiniBatch one_hop = full.sample(at::arange(begin, end, at::kLong), 0, 0);
        const sampling::Block& block = one_hop.blocks[0];
        // On a GPU each chunk's block and input rows go to the device and its output comes back.
        const at::Tensor x = layer_inputs(block.src_ids).to(device);
        rows = model.layer_forward(layer, nn::BlockView::of(sampling::to_device(block, device)), x)
                   .to(at::kCPU);
      } catch (const c10::OutOfMemoryError& e) {
        chunk = smaller_chunk(end - begin, device, e);
        continue;
      }
      out.write(begin, rows);
      if (show_progress) progress.advance(1, end - begin);
      begin = end;
    }
    if (show_progress) progress.finish();
    out.finish();
    layer_inputs = out.read;
  }
  return layer_inputs;
}

at::Tensor layerwise_inference(nn::GnnModel& model, const sampling::NeighborSource& source,
                               const RowReader& inputs, int64_t batch_size, bool show_progress,
                               distributed::ProcessGroup* group) {
  const bool distributed = group != nullptr && group->world_size() > 1;
  const int64_t n = source.num_nodes();
  at::Tensor last;
  const LayerOutputFactory in_process = [&](int64_t layer, int64_t dim) {
    const std::vector<int64_t> shape{n, dim};
    const at::Tensor out =
        !distributed ? at::empty(shape, at::kFloat)
        : group->single_host()
            ? group->shared_tensor(fmt::format("inference-{}", layer), shape, at::kFloat)
            : at::zeros(shape, at::kFloat);
    last = out;
    return LayerOutput{.write =
                           [out](int64_t first_node, const at::Tensor& rows) {
                             out.narrow(0, first_node, rows.size(0)).copy_(rows);
                           },
                       .finish =
                           [out, distributed, group] {
                             if (distributed && group->single_host()) {
                               group->barrier();  // every share written before anyone reads it
                             } else if (distributed) {
                               at::Tensor sum = out;
                               group->allreduce(sum);
                             }
                           },
                       .read =
                           [out](const at::Tensor& ids) {
                             at::Tensor x = at::empty({ids.numel(), out.size(1)}, out.options());
                             features::gather_rows(out, ids, x);
                             return x;
                           }};
  };
  layerwise_inference(model, source, inputs, batch_size, show_progress, group, in_process);
  return last;
}

}  // namespace graphloom::train
