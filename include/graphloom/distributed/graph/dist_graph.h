// DistGraph: the partitioned graph seen from a trainer — a NeighborSource and a FeatureSource
// over the partition book. Seeds and ids are split by owner; the part this machine holds is
// read in place (no RPC), the others are asked concurrently over RPC, and the answers are
// merged back in request order. The multi-layer sampler and the DataLoader run on it unchanged.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphloom/distributed/rpc/graph_client.h"
#include "graphloom/features/feature_source.h"
#include "graphloom/partition/partition_book.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::distributed {

class DistGraph : public sampling::NeighborSource, public features::FeatureSource {
 public:
  // `servers[k]`: the addresses of the servers of part k (requests rotate over them).
  // `local_part`: this machine's part, read directly (may be null); must outlive the graph.
  // Waits for every server to answer (ClientOptions::startup_timeout).
  DistGraph(const std::vector<std::vector<std::string>>& servers, const ClientOptions& options,
            const partition::Partition* local_part = nullptr);
  // Over given clients of each part (e.g. in-memory parts in tests); `outage_grace` as in
  // ClientOptions.
  explicit DistGraph(std::vector<std::vector<std::unique_ptr<PartClient>>> clients,
                     const partition::Partition* local_part = nullptr,
                     std::chrono::milliseconds outage_grace = ClientOptions{}.outage_grace);

  int64_t num_nodes() const override { return book_.num_nodes(); }
  sampling::SampledEdges sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                          const sampling::SampleOptions& options) const override;

  bool has(const std::string& name) const override { return metadata_.tensors.count(name) > 0; }
  features::FeatureInfo info(const std::string& name) const override;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override;
  using features::FeatureSource::gather;
  // Writes `rows` into `name` at `ids` on the owning servers.
  void push(const std::string& name, const at::Tensor& ids, const at::Tensor& rows) const;
  // Creates the node tensor `name` (zeros) on every part; idempotent for the same schema. Not
  // to be called while other threads gather or push.
  void create_tensor(const std::string& name, const TensorSchema& schema,
                     const TensorInit& init = {});
  // Sends each owner its rows' update. `ids` must be distinct. Always to the part's first
  // (main) server, so that one process applies every update of a row; never retried on another
  // server (an update is not idempotent): with the main server down it throws.
  void sparse_update(const std::string& name, const at::Tensor& ids, const at::Tensor& grads,
                     const SparseOptimizerOptions& optimizer) const;

  const partition::PartitionBook& book() const { return book_; }
  // Bytes of rows pulled from remote servers (features, labels, embeddings) since the start or
  // the last reset: the traffic a feature cache saves.
  int64_t pulled_bytes(bool reset = false) const {
    return reset ? pulled_bytes_.exchange(0) : pulled_bytes_.load();
  }

 private:
  // Whether `name` is encoded (16-bit floats, or with a row scale) and decoded on gather.
  bool decodes(const std::string& name) const;
  // Rows as the servers store them.
  void gather_stored(const std::string& name, const at::Tensor& ids, at::Tensor& out) const;
  // The local part's table of `name` (a feature, "label", a feature's row scale), or null.
  const at::Tensor* local_table(const std::string& name) const;
  // `call(client)` on the part's servers in turn, starting at `first` (else the next in round
  // robin), while they are unavailable: for idempotent calls only. When none is live, tries
  // them all again every 250 ms until the outage grace ends, then throws naming the part.
  template <class Call>
  auto on_live_server(int64_t part, std::size_t first, Call&& call) const;
  template <class Call>
  auto on_live_server(int64_t part, Call&& call) const;
  const TensorSchema& schema(const std::string& name) const;
  // Whether `part` is read in place for `name` (the local part's own tensors only).
  bool reads_locally(int64_t part, const std::string& name) const;

  ServerMetadata metadata_;  // of part 0's first server: book, edge ranges, tensor schemas
  std::vector<std::vector<std::unique_ptr<PartClient>>> clients_;
  mutable std::unique_ptr<std::atomic<uint64_t>[]> next_server_;
  partition::PartitionBook book_;
  const partition::Partition* local_ = nullptr;
  std::chrono::milliseconds outage_grace_;
  mutable std::atomic<int64_t> pulled_bytes_{0};
};

// A node tensor split over the parts by the partition book (DGL's DistTensor): pull and push
// rows by global node id; new ones (e.g. layer outputs of distributed inference) are created
// on every part.
class DistTensor {
 public:
  // Creates `name` with [num_nodes, row_shape...] zeros, or attaches to it when it exists with
  // this schema. `graph` must outlive the tensor.
  DistTensor(DistGraph& graph, std::string name, const TensorSchema& schema);

  const std::string& name() const { return name_; }
  int64_t num_rows() const { return graph_->num_nodes(); }
  at::Tensor pull(const at::Tensor& ids) const { return graph_->gather(name_, ids); }
  void push(const at::Tensor& ids, const at::Tensor& rows) const { graph_->push(name_, ids, rows); }

 private:
  DistGraph* graph_;
  std::string name_;
};

// Learnable node embeddings for featureless nodes (DGL's DistEmbedding): rows live on the
// servers owning the nodes; a trainer pulls the rows of its batch, and after backward sends
// their gradients, which the owners apply with sparse Adagrad or Adam, one row at a time.
class DistEmbedding {
 public:
  // Creates `name` [num_nodes, dim] uniform in [-init_scale, init_scale) (keyed by `seed` and
  // node id, so every trainer sees the same values) and its optimizer state, or attaches to
  // them when they exist.
  DistEmbedding(DistGraph& graph, std::string name, int64_t dim,
                SparseOptimizerOptions optimizer = {}, float init_scale = 1.0f, uint64_t seed = 0);

  const std::string& name() const { return name_; }
  int64_t dim() const { return dim_; }
  at::Tensor pull(const at::Tensor& ids) const { return graph_->gather(name_, ids); }
  // Sums `grads` ([n, dim]) over repeated ids and has the owners apply one optimizer step.
  void step(const at::Tensor& ids, const at::Tensor& grads) const;
  // The rows and the optimizer's state, each tensor whole ([num_nodes, ...], pulled from the
  // owners) by its name on the servers: what a checkpoint keeps. load_state writes them back;
  // it throws an Error naming the embedding when one is missing or of another shape.
  std::map<std::string, at::Tensor> state() const;
  void load_state(const std::map<std::string, at::Tensor>& state) const;

 private:
  std::vector<std::string> tensor_names() const;

  DistGraph* graph_;
  std::string name_;
  int64_t dim_;
  SparseOptimizerOptions optimizer_;
};

}  // namespace graphloom::distributed
