// The client side of one graph server: typed calls with the cluster token, a deadline on every
// call, retries with backoff while the server is UNAVAILABLE, and errors that name the server.
#pragma once

#include <ATen/core/Tensor.h>

#include <c10/core/ScalarType.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphloom/base/error.h"
#include "graphloom/features/feature_source.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::distributed {

struct ClientOptions {
  std::string token;  // empty: no token sent (servers started with --insecure)
  std::chrono::milliseconds deadline = std::chrono::seconds(30);  // per call
  int retries = 3;  // extra attempts while UNAVAILABLE, with backoff
  // DistGraph waits this long for every server to answer at start (servers may still be
  // loading their part when trainers start).
  std::chrono::milliseconds startup_timeout = std::chrono::seconds(120);
  // When no server of a part answers, DistGraph tries the part again for this long (its
  // servers may be restarting under a supervisor) before it fails naming the part.
  std::chrono::milliseconds outage_grace = std::chrono::seconds(30);
  // Receive limit; bulk calls are split into chunks of at most a quarter of it (and 4 MB), so
  // set it to the servers' --max-message-mb when that is smaller.
  int64_t max_message_bytes = 64 << 20;
  // TLS: the CA that signed the servers' certificates (empty: plaintext), and this client's
  // own certificate and key for servers that require them.
  std::filesystem::path tls_ca, tls_cert, tls_key;
};

struct TensorSchema {
  c10::ScalarType dtype;
  std::vector<int64_t> row_shape;

  int64_t row_bytes() const {
    int64_t bytes = static_cast<int64_t>(c10::elementSize(dtype));
    for (const int64_t size : row_shape) bytes *= size;
    return bytes;
  }
};

// How a run-time tensor is filled at creation: zeros, or uniform in [low, high) when
// high > low (float32 only), keyed by (seed, global node id).
struct TensorInit {
  float low = 0;
  float high = 0;
  uint64_t seed = 0;
};

// A sparse optimizer step applied by the owner of the rows (see SparseUpdate in the proto).
struct SparseOptimizerOptions {
  std::string kind = "adam";  // adam | adagrad
  float lr = 0.01f;
  float eps = 1e-8f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
};

struct ServerMetadata {
  int64_t part = 0;
  int64_t num_parts = 0;
  std::vector<int64_t> node_range_ends;
  std::vector<int64_t> edge_range_ends;
  std::map<std::string, TensorSchema> tensors;
  std::string graph_name;
  std::string version;
};

// What DistGraph asks of the servers of one part: GraphClient answers over RPC; tests answer
// from memory, so that DistGraph's split by owner and merge in request order are checked
// without servers.
class PartClient {
 public:
  virtual ~PartClient() = default;
  virtual const std::string& address() const = 0;
  // `seeds` must all be owned by the part.
  virtual sampling::SampledEdges sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                                  const sampling::SampleOptions& options) const = 0;
  // Receives `count` rows for ids[first .. first + count), raw bytes; may be called from several
  // threads at once for disjoint ranges.
  using RowSink = std::function<void(int64_t first, const char* rows, int64_t count)>;
  // Rows `ids` of `name`, handed to `sink` as they arrive.
  virtual void pull_into(const std::string& name, const at::Tensor& ids, const TensorSchema& schema,
                         const RowSink& sink) const = 0;
  // Writes rows `ids` of `name`.
  virtual void push(const std::string& name, const at::Tensor& ids,
                    const at::Tensor& rows) const = 0;
  // A node tensor on the part (idempotent for the same schema).
  virtual void create_tensor(const std::string& name, const TensorSchema& schema,
                             const TensorInit& init) const = 0;
  // `ids` distinct and owned by the part; `grads` float32 [n, dim].
  virtual void sparse_update(const std::string& name, const at::Tensor& ids,
                             const at::Tensor& grads,
                             const SparseOptimizerOptions& optimizer) const = 0;
  virtual ServerMetadata metadata() const = 0;
};

// A call that found its server down, unreachable or silent past the deadline (after the
// retries): an idempotent call may go to another server of the part.
class ServerUnavailable : public Error {
 public:
  using Error::Error;
};

// A call refused as too large (RESOURCE_EXHAUSTED: the server's message limit or request
// budget, or this client's message limit): the same work in smaller calls may pass.
class MessageTooLarge : public Error {
 public:
  using Error::Error;
};

class GraphClient : public PartClient {
 public:
  GraphClient(std::string address, ClientOptions options);
  ~GraphClient() override;
  GraphClient(GraphClient&&) noexcept;

  const std::string& address() const override { return address_; }
  sampling::SampledEdges sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                          const sampling::SampleOptions& options) const override;
  // Rows `ids` of `name` ([n, schema.row_shape...]).
  at::Tensor pull(const std::string& name, const at::Tensor& ids, const TensorSchema& schema) const;
  // Rows arrive straight from each response into `sink`.
  void pull_into(const std::string& name, const at::Tensor& ids, const TensorSchema& schema,
                 const RowSink& sink) const override;
  // In chunks sent concurrently: an id given twice ends with either row, and a failure
  // part-way leaves the chunks already sent written.
  void push(const std::string& name, const at::Tensor& ids, const at::Tensor& rows) const override;
  void create_tensor(const std::string& name, const TensorSchema& schema,
                     const TensorInit& init = {}) const override;
  void sparse_update(const std::string& name, const at::Tensor& ids, const at::Tensor& grads,
                     const SparseOptimizerOptions& optimizer) const override;
  ServerMetadata metadata() const override;
  std::string health() const;
  // Returns once the server answers; waits while it refuses connections (still starting),
  // throws on any other failure or after `timeout`.
  void wait_until_serving(std::chrono::milliseconds timeout) const;
  void shutdown() const;

 private:
  int64_t chunk_bytes() const;  // target bytes per bulk call

  struct Impl;
  std::string address_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphloom::distributed
