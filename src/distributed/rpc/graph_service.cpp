// The graph service over one memory-mapped part: token check, validation, then the kernels
// of the sampling and features modules.
#include "graph_service.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <shared_mutex>

#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"
#include "graphloom/distributed/rpc/authorization.h"
#include "graphloom/distributed/rpc/part_sampling.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/features/disk_rows.h"
#include "graphloom/features/tensor_feature_source.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom_proto/graph_service.grpc.pb.h"
#include "memory_trimmer.h"
#include "part_disk_features.h"
#include "part_tensors.h"
#include "raw_message.h"
#include "rpc_bytes.h"
#include "service_handler.h"

#ifndef GRAPHLOOM_VERSION
#define GRAPHLOOM_VERSION "unknown"
#endif

namespace graphloom::distributed {
namespace {

// Edge-type fanouts a request may carry: far above any real schema, far below a memory risk.
constexpr int kMaxEdgeTypes = 1 << 15;

// Every method is a raw callback method. The bulk ones, Pull and SampleNeighbors, send their
// result tensors from where they were computed (raw_message.h), where protobuf would copy them
// into strings and those into gRPC's buffer; and a raw method decodes its own request, so that
// a payload that does not parse is answered INVALID_ARGUMENT with a message (service_handler.h)
// where gRPC's synchronous methods answer a bare INTERNAL. Callback methods run on gRPC's own
// threads (2 to 16, by core count). Their work is computed there, not handed to a pool: it is
// CPU-bound and bounded by the message limit and the request budget (a 4 MB chunk is the usual
// size, ~1 ms), and the only wait, a Pull's shared lock behind a Push, is as short.
using RawGraphService = rpc::GraphService::WithRawCallbackMethod_SampleNeighbors<
    rpc::GraphService::WithRawCallbackMethod_Pull<rpc::GraphService::WithRawCallbackMethod_Push<
        rpc::GraphService::WithRawCallbackMethod_CreateTensor<
            rpc::GraphService::WithRawCallbackMethod_SparseUpdate<
                rpc::GraphService::WithRawCallbackMethod_Metadata<
                    rpc::GraphService::WithRawCallbackMethod_Health<
                        rpc::GraphService::WithRawCallbackMethod_Shutdown<
                            rpc::GraphService::Service>>>>>>>>;

class GraphServiceImpl final : public RawGraphService {
 public:
  GraphServiceImpl(const ServerOptions& options, std::function<void()> request_shutdown)
      : options_(options),
        info_(partition::read_partition_info(options.partition_dir)),
        request_shutdown_(std::move(request_shutdown)) {
    GL_CHECK(options.part >= 0 && options.part < info_.num_parts,
             "part {} does not exist: '{}' has {} parts", options.part,
             options.partition_dir.string(), info_.num_parts);
    switch (options.role) {
      case ServerRole::kStandalone:
        part_ = loaded_part();
        break;
      case ServerRole::kMain:
        if (options.adopt_shared && SharedPartition::published(options.cluster_id, options.part)) {
          shared_ = SharedPartition::attach(options.cluster_id, options.part,
                                            std::chrono::milliseconds(0));
          spdlog::info("part {}: restarted, serving the shared memory already published",
                       options.part);
        } else {
          shared_ = SharedPartition::publish(loaded_part(), options.cluster_id, options.part);
        }
        part_ = shared_->part();
        break;
      case ServerRole::kBackup:
        shared_ = SharedPartition::attach(options.cluster_id, options.part, options.attach_timeout);
        part_ = shared_->part();
        break;
    }
    int64_t edge_end = 0;
    for (int64_t k = 0; k < info_.num_parts; ++k) {
      edge_end += info_.edges_per_part[k];
      edge_range_ends_.push_back(edge_end);
    }
    edge_begin_ = edge_range_ends_[options.part] - info_.edges_per_part[options.part];
    if (options.features_on_disk) read_features_from_disk();
    tensors_ = std::make_unique<PartTensors>(part_, shared_.get(), options.part);
  }

  grpc::ServerUnaryReactor* SampleNeighbors(grpc::CallbackServerContext* context,
                                            const grpc::ByteBuffer* request_bytes,
                                            grpc::ByteBuffer* response) override {
    return raw_unary<rpc::SampleRequest>(
        handler_, context, "SampleNeighbors", request_bytes, response,
        [&](const rpc::SampleRequest& request, grpc::ByteBuffer& out) {
          const at::Tensor seeds = owned_ids(request.seeds(), "seeds");
          sampling::SampleOptions sample;
          sample.replace = request.replace();
          sample.weighted = request.weighted();
          sample.direction =
              request.out_edges() ? sampling::EdgeDirection::kOut : sampling::EdgeDirection::kIn;
          sample.random_key = request.random_key();
          sample.edge_ids = !request.omit_edge_ids();
          sample.labor = {.enabled = request.labor(),
                          .key = request.labor_key(),
                          .blend = request.labor_blend(),
                          .next_key = request.labor_next_key(),
                          .mix = request.labor_mix()};
          GL_CHECK(request.edge_type_fanouts_size() <= kMaxEdgeTypes,
                   "edge_type_fanouts: {} entries exceed the limit of {}",
                   request.edge_type_fanouts_size(), kMaxEdgeTypes);
          sample.edge_type_fanouts.assign(request.edge_type_fanouts().begin(),
                                          request.edge_type_fanouts().end());
          if (!request.seed_times().empty()) {
            sample.seed_times = ids_from_bytes(request.seed_times(), "seed_times");
            GL_CHECK(sample.seed_times.numel() == seeds.numel(),
                     "seed_times: {} times for {} seeds", sample.seed_times.numel(), seeds.numel());
            sample.temporal_strategy = request.temporal_last()
                                           ? sampling::TemporalStrategy::kLast
                                           : sampling::TemporalStrategy::kUniform;
          }
          // Each pick costs a neighbor and a position (later its edge id), and an edge type
          // on a typed graph: the kernel refuses a request over the budget before allocating.
          const int64_t pick_bytes = part_.graph.type_per_edge.defined() ? 24 : 16;
          sample.max_picks = response_budget() / pick_bytes;
          sampling::SampledEdges edges;
          try {
            edges = sample_part_neighbors(part_, edge_begin_, seeds, request.fanout(), sample,
                                          fmt::format("'{}'", options_.partition_dir.string()));
          } catch (const LimitError& e) {
            if (e.field() != "max_picks") throw;  // the fanout's own bound
            // The sampler's detail reads "(N) is below the picks of ...": the limit the client
            // can see is the server's byte budget.
            throw LimitError(budget_name(),
                             fmt::format("({} bytes: {} picks of {} bytes) {}", response_budget(),
                                         sample.max_picks, pick_bytes,
                                         e.detail().substr(e.detail().find(") ") + 2)));
          }
          trimmer_.note_allocated(edges.neighbors.numel() * pick_bytes);
          // Field numbers of SampleResponse; undefined tensors (edge ids when omitted, edge
          // types of an untyped graph) are left out.
          out = raw_message({{1, edges.indptr},
                             {2, edges.neighbors},
                             {3, edges.edge_ids},
                             {4, edges.edge_types}});
        });
  }

  grpc::ServerUnaryReactor* Pull(grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer* request_bytes,
                                 grpc::ByteBuffer* response) override {
    return raw_unary<rpc::PullRequest>(
        handler_, context, "Pull", request_bytes, response,
        [&](const rpc::PullRequest& request, grpc::ByteBuffer& out) {
          const bool from_disk = disk_feat_ != nullptr && disk_feat_->has(request.name());
          const at::Tensor table = from_disk ? at::Tensor() : tensors_->find(request.name());
          const at::Tensor local = owned_ids(request.ids(), "ids") - part_.node_begin;
          const features::FeatureInfo schema =
              from_disk ? disk_feat_->info(request.name())
                        : features::FeatureInfo{table.scalar_type(), table.sizes().slice(1).vec(),
                                                table.size(0)};
          int64_t row_bytes = c10::elementSize(schema.dtype);
          for (const int64_t d : schema.row_shape) row_bytes *= d;
          if (local.numel() * row_bytes > response_budget()) {
            throw LimitError(
                budget_name(),
                fmt::format("({}) is below the {} bytes of {} rows of '{}'", response_budget(),
                            local.numel() * row_bytes, local.numel(), request.name()));
          }
          std::vector<int64_t> shape{local.numel()};
          shape.insert(shape.end(), schema.row_shape.begin(), schema.row_shape.end());
          at::Tensor rows = at::empty(shape, schema.dtype);
          if (from_disk) {
            disk_feat_->gather(request.name(), local, rows);
          } else {
            std::shared_lock lock(tensors_->rows_mutex());
            features::gather_rows(table, local, rows);
          }
          trimmer_.note_allocated(static_cast<int64_t>(rows.nbytes()));
          out = raw_message({{1, rows}});  // PullResponse.rows
        });
  }

  grpc::ServerUnaryReactor* Push(grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer* request_bytes,
                                 grpc::ByteBuffer* response) override {
    return message_unary<rpc::PushRequest, rpc::PushResponse>(
        handler_, context, "Push", request_bytes, response,
        [&](const rpc::PushRequest& request, rpc::PushResponse&) {
          at::Tensor table = tensors_->find(request.name());
          const at::Tensor local = owned_ids(request.ids(), "ids") - part_.node_begin;
          const std::vector<int64_t> row_shape(table.sizes().begin() + 1, table.sizes().end());
          const at::Tensor rows =
              from_bytes(request.rows(), table.scalar_type(), row_shape, "rows");
          GL_CHECK(rows.size(0) == local.numel(), "push of '{}': {} ids but {} rows",
                   request.name(), local.numel(), rows.size(0));
          std::unique_lock lock(tensors_->rows_mutex());
          // Shared-memory tables are seen by every server of the machine; memory-mapped files
          // (standalone servers) are copy-on-write: pushes change this server's copy only.
          table.index_copy_(0, local, rows);
        });
  }

  grpc::ServerUnaryReactor* CreateTensor(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* request_bytes,
                                         grpc::ByteBuffer* response) override {
    return message_unary<rpc::CreateTensorRequest, rpc::CreateTensorResponse>(
        handler_, context, "CreateTensor", request_bytes, response,
        [&](const rpc::CreateTensorRequest& request, rpc::CreateTensorResponse&) {
          // Pulls of a table read from disk read the file: a second copy would never be read.
          GL_CHECK(disk_feat_ == nullptr || !disk_feat_->has(request.schema().name()),
                   "name: '{}' is read from disk on part {} and cannot be created",
                   request.schema().name(), options_.part);
          tensors_->create(request);
        });
  }

  grpc::ServerUnaryReactor* SparseUpdate(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* request_bytes,
                                         grpc::ByteBuffer* response) override {
    return message_unary<rpc::SparseUpdateRequest, rpc::SparseUpdateResponse>(
        handler_, context, "SparseUpdate", request_bytes, response,
        [&](const rpc::SparseUpdateRequest& request, rpc::SparseUpdateResponse&) {
          tensors_->sparse_update(request, owned_ids(request.ids(), "ids") - part_.node_begin);
        });
  }

  grpc::ServerUnaryReactor* Metadata(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request_bytes,
                                     grpc::ByteBuffer* response) override {
    return message_unary<rpc::MetadataRequest, rpc::MetadataResponse>(
        handler_, context, "Metadata", request_bytes, response,
        [&](const rpc::MetadataRequest&, rpc::MetadataResponse& out) {
          out.set_part(options_.part);
          out.set_num_parts(info_.num_parts);
          out.set_graph_name(info_.graph_name);
          out.set_version(GRAPHLOOM_VERSION);
          for (const int64_t end : info_.node_range_ends) out.add_node_range_ends(end);
          for (const int64_t end : edge_range_ends_) out.add_edge_range_ends(end);
          tensors_->describe(out);
          if (disk_feat_ != nullptr) {
            const features::FeatureInfo feat = disk_feat_->info(kDiskFeature);
            rpc::TensorSchema* schema = out.add_tensors();
            schema->set_name(kDiskFeature);
            schema->set_dtype(dtype_name(feat.dtype));
            for (const int64_t d : feat.row_shape) schema->add_row_shape(d);
          }
        });
  }

  grpc::ServerUnaryReactor* Health(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request_bytes,
                                   grpc::ByteBuffer* response) override {
    return message_unary<rpc::HealthRequest, rpc::HealthResponse>(
        handler_, context, "Health", request_bytes, response,
        [&](const rpc::HealthRequest&, rpc::HealthResponse& out) {
          out.set_status("serving");
          out.set_part(options_.part);
        });
  }

  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request_bytes,
                                     grpc::ByteBuffer* response) override {
    return message_unary<rpc::ShutdownRequest, rpc::ShutdownResponse>(
        handler_, context, "Shutdown", request_bytes, response,
        [&](const rpc::ShutdownRequest&, rpc::ShutdownResponse&) {
          spdlog::info("part {}: shutdown requested by {}", options_.part, context->peer());
          request_shutdown_();
        });
  }

 private:
  // The most bytes one answer may take: the message limit, or the memory budget if lower.
  int64_t response_budget() const {
    return std::min(options_.max_message_bytes, options_.max_request_bytes);
  }
  const char* budget_name() const {
    return options_.max_request_bytes < options_.max_message_bytes ? "max_request_bytes"
                                                                   : "max_message_bytes";
  }

  // Decodes int64 ids and checks that the part owns every one of them.
  at::Tensor owned_ids(const std::string& bytes, const char* what) const {
    const at::Tensor ids = ids_from_bytes(bytes, what);
    if (ids.numel() > 0) {
      const int64_t low = ids.min().item<int64_t>();
      const int64_t high = ids.max().item<int64_t>();
      GL_CHECK(low >= part_.node_begin && high < part_.node_end,
               "{}: node id {} is not in part {} (it owns [{}, {}))", what,
               low < part_.node_begin ? low : high, options_.part, part_.node_begin,
               part_.node_end);
    }
    return ids;
  }

  // The part from its files; with `features_on_disk` without the table read from disk, so
  // that it is neither kept in memory nor published in shared memory.
  partition::Partition loaded_part() const {
    partition::Partition part = partition::load_partition(options_.partition_dir, options_.part);
    if (options_.features_on_disk) part.features.erase(kDiskFeature);
    return part;
  }

  // features_on_disk: the part's "feat" from its file (a backup maps a part its main
  // published without it, and reads the file too).
  void read_features_from_disk() {
    part_.features.erase(kDiskFeature);
    disk_feat_ = part_features_on_disk(options_, info_, part_);
    spdlog::info("part {}: {}", options_.part, disk_feat_->description());
  }

  ServerOptions options_;
  partition::PartitionInfo info_;
  std::unique_ptr<SharedPartition> shared_;
  partition::Partition part_;
  std::vector<int64_t> edge_range_ends_;
  int64_t edge_begin_ = 0;
  std::unique_ptr<PartTensors> tensors_;
  std::unique_ptr<features::DiskRows> disk_feat_;  // features_on_disk: "feat" from its file
  std::function<void()> request_shutdown_;
  // Trims after 64 MiB of answers once no request has run for 200 ms.
  MemoryTrimmer trimmer_{64 << 20, std::chrono::milliseconds(200)};
  HandlerContext handler_{.part = options_.part,
                          .insecure = options_.insecure,
                          .token = &options_.token,
                          .trimmer = &trimmer_};
};

}  // namespace

std::unique_ptr<grpc::Service> make_graph_service(const ServerOptions& options,
                                                  std::function<void()> request_shutdown) {
  return std::make_unique<GraphServiceImpl>(options, std::move(request_shutdown));
}

}  // namespace graphloom::distributed
