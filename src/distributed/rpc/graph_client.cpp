// GraphClient: one gRPC channel to one server.
#include "graphloom/distributed/rpc/graph_client.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <thread>

#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"
#include "graphloom/base/fan_out.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom_proto/graph_service.grpc.pb.h"
#include "raw_message.h"
#include "rpc_bytes.h"

namespace graphloom::distributed {
namespace {

constexpr int64_t kChunkBytes = 4 << 20;
constexpr int64_t kMaxSampleChunkSeeds = 16384;
constexpr int64_t kCallsInFlight = 4;

// Runs `call(begin)` for begin = 0, chunk, 2*chunk, ... < count: inline for a single chunk,
// otherwise on kCallsInFlight pooled threads that each take the next chunk as soon as their last
// one is done (no waiting for the slowest of a wave). One large response crawls through gRPC
// (~0.35 GB/s for 50 MB here); chunks of a few MB with several calls in flight move ~5x faster
// (DESIGN.md section 5). Returns the results in chunk order. After a failure no new chunk
// starts; once the started ones have ended, the failure of the first chunk is rethrown.
template <typename Call>
auto for_each_chunk(int64_t count, int64_t chunk, Call&& call) {
  using Result = decltype(call(int64_t{0}));
  const int64_t chunks = count <= chunk ? 1 : (count + chunk - 1) / chunk;
  std::vector<int64_t> indices(static_cast<std::size_t>(chunks));
  std::iota(indices.begin(), indices.end(), 0);
  auto slots = fan_out<Result>(indices.size(), indices, kCallsInFlight,
                               [&](int64_t k) { return call(k * chunk); });
  std::vector<Result> ordered;
  ordered.reserve(slots.size());
  for (auto& slot : slots) ordered.push_back(std::move(*slot));
  return ordered;
}

// The picks of consecutive seed ranges as the picks of their union.
sampling::SampledEdges concatenated(std::vector<sampling::SampledEdges> parts) {
  if (parts.size() == 1) return std::move(parts[0]);
  std::vector<at::Tensor> indptrs{at::zeros({1}, at::kLong)}, neighbors, edge_ids, edge_types;
  int64_t offset = 0;
  for (const sampling::SampledEdges& part : parts) {
    indptrs.push_back(part.indptr.slice(0, 1) + offset);
    neighbors.push_back(part.neighbors);
    if (part.edge_ids.defined()) edge_ids.push_back(part.edge_ids);
    if (part.edge_types.defined()) edge_types.push_back(part.edge_types);
    offset += part.neighbors.numel();
  }
  sampling::SampledEdges out{at::cat(indptrs), at::cat(neighbors)};
  if (!edge_ids.empty()) out.edge_ids = at::cat(edge_ids);
  if (!edge_types.empty()) out.edge_types = at::cat(edge_types);
  return out;
}

}  // namespace

struct GraphClient::Impl {
  ClientOptions options;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  grpc::ChannelArguments arguments;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<rpc::GraphService::Stub> stub;
  // Pull and SampleNeighbors with their responses left in gRPC's slices (raw_message.h).
  std::unique_ptr<grpc::internal::RpcMethod> raw_pull, raw_sample;

  template <typename Request>
  grpc::ByteBuffer raw_call(const std::string& address, const char* name,
                            const grpc::internal::RpcMethod& method, const Request& request) const {
    return call<Request, grpc::ByteBuffer>(
        address, name,
        [&](rpc::GraphService::Stub&, grpc::ClientContext* context, const Request& sent,
            grpc::ByteBuffer* response) {
          return grpc::internal::BlockingUnaryCall<Request, grpc::ByteBuffer,
                                                   google::protobuf::MessageLite, grpc::ByteBuffer>(
              channel.get(), method, context, sent, response);
        },
        request);
  }

  // One call with deadline, token and retries on UNAVAILABLE; throws naming the server.
  template <typename Request, typename Response, typename Method>
  Response call(const std::string& address, const char* name, Method method,
                const Request& request) const {
    std::chrono::milliseconds backoff(100);
    for (int attempt = 0;; ++attempt) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + options.deadline);
      if (!options.token.empty()) context.AddMetadata("authorization", "Bearer " + options.token);
      Response response;
      const grpc::Status status = std::invoke(method, *stub, &context, request, &response);
      if (status.ok()) return response;
      if (status.error_code() == grpc::StatusCode::UNAVAILABLE && attempt < options.retries) {
        std::this_thread::sleep_for(backoff);
        backoff *= 2;
        continue;
      }
      const std::string message =
          fmt::format("graph server {}: {} failed: {} ({})", address, name, status.error_message(),
                      status_name(status.error_code()));
      if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
          status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        throw ServerUnavailable(message);
      }
      if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        throw MessageTooLarge(message);
      }
      throw Error(message);
    }
  }

  static const char* status_name(grpc::StatusCode code) {
    switch (code) {
      case grpc::StatusCode::UNAUTHENTICATED:
        return "UNAUTHENTICATED";
      case grpc::StatusCode::INVALID_ARGUMENT:
        return "INVALID_ARGUMENT";
      case grpc::StatusCode::UNAVAILABLE:
        return "UNAVAILABLE: the server is down or unreachable";
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        return "DEADLINE_EXCEEDED";
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        return "RESOURCE_EXHAUSTED: message too large";
      default:
        return "gRPC error";
    }
  }
};

GraphClient::GraphClient(std::string address, ClientOptions options)
    : address_(std::move(address)), impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  grpc::ChannelArguments& arguments = impl_->arguments;
  arguments.SetMaxReceiveMessageSize(static_cast<int>(impl_->options.max_message_bytes));
  arguments.SetMaxSendMessageSize(static_cast<int>(impl_->options.max_message_bytes));
  // Bulk responses: large HTTP/2 frames and a large flow-control window, so a few MB arrive
  // without waiting for window updates.
  arguments.SetInt("grpc.http2.max_frame_size", (1 << 24) - 1);
  arguments.SetInt("grpc.http2.lookahead_bytes", 64 << 20);
  // A server that comes back (restarted by its supervisor) is tried again within a second or
  // two, not after gRPC's default backoff of up to two minutes.
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  std::shared_ptr<grpc::ChannelCredentials>& credentials = impl_->credentials;
  credentials = grpc::InsecureChannelCredentials();
  const ClientOptions& o = impl_->options;
  if (!o.tls_ca.empty()) {
    GL_CHECK(o.tls_cert.empty() == o.tls_key.empty(),
             "a TLS client certificate needs both its certificate and its key");
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = read_pem_file(o.tls_ca, "TLS CA");
    if (!o.tls_cert.empty()) {
      tls.pem_cert_chain = read_pem_file(o.tls_cert, "TLS certificate");
      tls.pem_private_key = read_pem_file(o.tls_key, "TLS key");
    }
    credentials = grpc::SslCredentials(tls);
  }
  impl_->channel = grpc::CreateCustomChannel(address_, credentials, arguments);
  impl_->stub = rpc::GraphService::NewStub(impl_->channel);
  auto raw_method = [this](const char* name) {
    return std::make_unique<grpc::internal::RpcMethod>(name, grpc::internal::RpcMethod::NORMAL_RPC,
                                                       impl_->channel);
  };
  impl_->raw_pull = raw_method("/graphloom.rpc.GraphService/Pull");
  impl_->raw_sample = raw_method("/graphloom.rpc.GraphService/SampleNeighbors");
}

GraphClient::~GraphClient() = default;

int64_t GraphClient::chunk_bytes() const {
  return std::min<int64_t>(kChunkBytes, impl_->options.max_message_bytes / 4);
}
GraphClient::GraphClient(GraphClient&&) noexcept = default;

sampling::SampledEdges GraphClient::sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                                     const sampling::SampleOptions& options) const {
  const at::Tensor all = seeds.to(at::kLong).contiguous();
  // Seeds per call so that a response stays near the chunk size: 8 bytes per pick for the
  // neighbor, 8 for its edge id when asked, 8 for its edge type (budgeted whether or not the
  // graph is typed); -1 (all neighbors) is budgeted as 32 picks, per edge type when given.
  const auto budget = [](int64_t picks) { return picks < 0 ? 32 : std::max<int64_t>(picks, 1); };
  int64_t picks = options.edge_type_fanouts.empty() ? budget(fanout) : 0;
  for (const int64_t type_fanout : options.edge_type_fanouts) picks += budget(type_fanout);
  const int64_t pick_bytes = options.edge_ids ? 24 : 16;
  const int64_t chunk_seeds =
      std::clamp<int64_t>(chunk_bytes() / (pick_bytes * picks + 8), 64, kMaxSampleChunkSeeds);
  // One call for the seeds [begin, begin + count).
  auto sample_call = [&](int64_t begin, int64_t count) {
    const at::Tensor chunk = all.slice(0, begin, begin + count);
    rpc::SampleRequest request;
    request.set_seeds(to_bytes(chunk));
    request.set_fanout(fanout);
    request.set_replace(options.replace);
    request.set_weighted(options.weighted);
    request.set_out_edges(options.direction == sampling::EdgeDirection::kOut);
    request.set_random_key(options.random_key);
    request.set_omit_edge_ids(!options.edge_ids);
    request.set_labor(options.labor.enabled);
    request.set_labor_key(options.labor.key);
    request.set_labor_blend(options.labor.blend);
    request.set_labor_next_key(options.labor.next_key);
    request.set_labor_mix(options.labor.mix);
    for (const int64_t type_fanout : options.edge_type_fanouts) {
      request.add_edge_type_fanouts(type_fanout);
    }
    if (options.seed_times.defined()) {
      request.set_seed_times(
          to_bytes(options.seed_times.slice(0, begin, begin + chunk.numel()).contiguous()));
      request.set_temporal_last(options.temporal_strategy == sampling::TemporalStrategy::kLast);
    }
    const std::string what = fmt::format("graph server {}: sampling response", address_);
    return read_sample_response(
        impl_->raw_call(address_, "SampleNeighbors", *impl_->raw_sample, request), chunk.numel(),
        options.edge_ids, what);
  };
  // The budget above guesses all-neighbor picks (hubs pass it): an answer refused as too large
  // is asked for again in halves, down to single seeds. Each seed's picks come from its own
  // random stream, so the halves answer what the whole would have. A fanout that no single
  // seed can be answered with is refused here, before any call.
  if (options.replace && fanout > sampling::kMaxReplacementFanout) {
    throw LimitError("fanout", fmt::format("with replacement must be at most {}, got {}",
                                           sampling::kMaxReplacementFanout, fanout));
  }
  std::function<sampling::SampledEdges(int64_t, int64_t)> sample_range = [&](int64_t begin,
                                                                             int64_t count) {
    try {
      return sample_call(begin, count);
    } catch (const MessageTooLarge&) {
      if (count <= 1) throw;
      const int64_t half = count / 2;
      return concatenated({sample_range(begin, half), sample_range(begin + half, count - half)});
    }
  };
  return concatenated(for_each_chunk(all.numel(), chunk_seeds, [&](int64_t begin) {
    return sample_range(begin, std::min(chunk_seeds, all.numel() - begin));
  }));
}

void GraphClient::pull_into(const std::string& name, const at::Tensor& ids,
                            const TensorSchema& schema, const RowSink& sink) const {
  const at::Tensor all = ids.to(at::kLong).contiguous();
  const int64_t row_bytes = schema.row_bytes();
  const int64_t chunk = std::max<int64_t>(1, chunk_bytes() / std::max<int64_t>(row_bytes, 1));
  auto pull_chunk = [&](int64_t begin) {
    const at::Tensor chunk_ids = all.slice(0, begin, std::min(all.numel(), begin + chunk));
    rpc::PullRequest request;
    request.set_name(name);
    request.set_ids(to_bytes(chunk_ids));
    deliver_pulled_rows(impl_->raw_call(address_, "Pull", *impl_->raw_pull, request), row_bytes,
                        chunk_ids.numel(), begin, sink,
                        fmt::format("graph server {}: rows of '{}'", address_, name));
    return true;
  };
  for_each_chunk(all.numel(), chunk, pull_chunk);
}

at::Tensor GraphClient::pull(const std::string& name, const at::Tensor& ids,
                             const TensorSchema& schema) const {
  std::vector<int64_t> shape{ids.numel()};
  shape.insert(shape.end(), schema.row_shape.begin(), schema.row_shape.end());
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(schema.dtype));
  auto* destination = static_cast<char*>(out.data_ptr());
  const int64_t row_bytes = schema.row_bytes();
  pull_into(name, ids, schema, [&](int64_t first, const char* rows, int64_t count) {
    std::memcpy(destination + first * row_bytes, rows, count * row_bytes);
  });
  return out;
}

void GraphClient::push(const std::string& name, const at::Tensor& ids,
                       const at::Tensor& rows) const {
  const at::Tensor all_ids = ids.to(at::kLong).contiguous();
  const at::Tensor all_rows = rows.contiguous();
  GL_CHECK(all_rows.dim() >= 1 && all_rows.size(0) == all_ids.numel(),
           "push of '{}': {} ids but {} rows", name, all_ids.numel(),
           all_rows.dim() >= 1 ? all_rows.size(0) : 0);
  // Chunked like pulls: a message stays far below the servers' size limit.
  const int64_t row_bytes =
      all_ids.numel() > 0 ? static_cast<int64_t>(all_rows.nbytes()) / all_ids.numel() : 1;
  const int64_t chunk = std::max<int64_t>(1, chunk_bytes() / std::max<int64_t>(row_bytes, 1));
  for_each_chunk(all_ids.numel(), chunk, [&](int64_t begin) {
    const int64_t end = std::min(all_ids.numel(), begin + chunk);
    rpc::PushRequest request;
    request.set_name(name);
    request.set_ids(to_bytes(all_ids.slice(0, begin, end)));
    request.set_rows(to_bytes(all_rows.slice(0, begin, end)));
    impl_->call<rpc::PushRequest, rpc::PushResponse>(address_, "Push",
                                                     &rpc::GraphService::Stub::Push, request);
    return true;
  });
}

void GraphClient::create_tensor(const std::string& name, const TensorSchema& schema,
                                const TensorInit& init) const {
  rpc::CreateTensorRequest request;
  request.set_init_low(init.low);
  request.set_init_high(init.high);
  request.set_init_seed(init.seed);
  request.mutable_schema()->set_name(name);
  request.mutable_schema()->set_dtype(dtype_name(schema.dtype));
  for (const int64_t size : schema.row_shape) request.mutable_schema()->add_row_shape(size);
  impl_->call<rpc::CreateTensorRequest, rpc::CreateTensorResponse>(
      address_, "CreateTensor", &rpc::GraphService::Stub::CreateTensor, request);
}

void GraphClient::sparse_update(const std::string& name, const at::Tensor& ids,
                                const at::Tensor& grads,
                                const SparseOptimizerOptions& optimizer) const {
  rpc::SparseUpdateRequest request;
  request.set_name(name);
  request.set_ids(to_bytes(ids.to(at::kLong)));
  request.set_grads(to_bytes(grads.to(at::kFloat)));
  request.set_optimizer(optimizer.kind);
  request.set_lr(optimizer.lr);
  request.set_eps(optimizer.eps);
  request.set_beta1(optimizer.beta1);
  request.set_beta2(optimizer.beta2);
  impl_->call<rpc::SparseUpdateRequest, rpc::SparseUpdateResponse>(
      address_, "SparseUpdate", &rpc::GraphService::Stub::SparseUpdate, request);
}

ServerMetadata GraphClient::metadata() const {
  const auto response = impl_->call<rpc::MetadataRequest, rpc::MetadataResponse>(
      address_, "Metadata", &rpc::GraphService::Stub::Metadata, rpc::MetadataRequest());
  ServerMetadata out;
  out.part = response.part();
  out.num_parts = response.num_parts();
  out.node_range_ends.assign(response.node_range_ends().begin(), response.node_range_ends().end());
  out.edge_range_ends.assign(response.edge_range_ends().begin(), response.edge_range_ends().end());
  for (const auto& schema : response.tensors()) {
    out.tensors[schema.name()] = {dtype_from_name(schema.dtype()),
                                  {schema.row_shape().begin(), schema.row_shape().end()}};
  }
  out.graph_name = response.graph_name();
  out.version = response.version();
  return out;
}

void GraphClient::wait_until_serving(std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Each try on a channel of its own: a channel refused while the server was still starting
  // backs off reconnecting for seconds (seen: 4 to 15 s after the server was up), and the
  // client's own channel, untouched until then, connects at its first call.
  grpc::ChannelArguments probe_arguments = impl_->arguments;
  probe_arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + impl_->options.deadline);
    if (!impl_->options.token.empty()) {
      context.AddMetadata("authorization", "Bearer " + impl_->options.token);
    }
    rpc::HealthResponse response;
    const auto probe = rpc::GraphService::NewStub(
        grpc::CreateCustomChannel(address_, impl_->credentials, probe_arguments));
    const grpc::Status status = probe->Health(&context, rpc::HealthRequest(), &response);
    if (status.ok()) return;
    // UNAVAILABLE: not listening yet (still loading its part); anything else is final.
    GL_CHECK(status.error_code() == grpc::StatusCode::UNAVAILABLE &&
                 std::chrono::steady_clock::now() < deadline,
             "graph server {} is not serving after waiting {} s: {} ({})", address_,
             std::chrono::duration_cast<std::chrono::seconds>(timeout).count(),
             status.error_message(), Impl::status_name(status.error_code()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string GraphClient::health() const {
  return impl_
      ->call<rpc::HealthRequest, rpc::HealthResponse>(
          address_, "Health", &rpc::GraphService::Stub::Health, rpc::HealthRequest())
      .status();
}

void GraphClient::shutdown() const {
  impl_->call<rpc::ShutdownRequest, rpc::ShutdownResponse>(
      address_, "Shutdown", &rpc::GraphService::Stub::Shutdown, rpc::ShutdownRequest());
}

}  // namespace graphloom::distributed
