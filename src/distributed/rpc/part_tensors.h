// The node tensors a graph server holds for its part, by name (internal to the graph server):
// the part's own (features, row scales, labels, node times) and those trainers create
// (embeddings and their sparse optimizer state), in shared memory where the servers of a
// machine share the part.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <shared_mutex>
#include <string>

#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom_proto/graph_service.pb.h"
#include "sparse_optimizer.h"

namespace graphloom::distributed {

class PartTensors {
 public:
  // `shared` (null for a standalone server) outlives this; `part` is the served part.
  PartTensors(const partition::Partition& part, SharedPartition* shared, int64_t part_id);

  // A handle to `name`: the part's own tensors, those created here, or (shared roles) those
  // another server of the machine created. Throws naming the part when there is none.
  at::Tensor find(const std::string& name);

  // CreateTensor: a [part rows, row_shape...] table of zeros (or uniform in [init_low,
  // init_high)), or the existing one when its schema matches. Refuses a table larger than
  // half of the memory the machine has left.
  void create(const rpc::CreateTensorRequest& request);

  // SparseUpdate: one Adagrad or Adam step of request.name() at the part's local rows `local`.
  void sparse_update(const rpc::SparseUpdateRequest& request, const at::Tensor& local);

  // Appends every tensor's schema (name, dtype, row shape) to a Metadata answer.
  void describe(rpc::MetadataResponse& out);

  // Row reads share it and row writes own it, so that a pull never sees half a push.
  std::shared_mutex& rows_mutex() { return mutex_; }

 private:
  void fill_uniform(at::Tensor& table, float low, float high, uint64_t seed) const;

  SharedPartition* shared_;
  int64_t part_id_;
  int64_t node_begin_;
  int64_t num_rows_;
  std::map<std::string, at::Tensor> tensors_;
  std::shared_mutex mutex_;  // tensors_, and row writes against row reads
  // Sparse updates lock the rows they change (striped): concurrent updates of one row never
  // interleave (DGL had NaNs from racing updates, dmlc/dgl#3561).
  RowLocks row_locks_;
};

}  // namespace graphloom::distributed
