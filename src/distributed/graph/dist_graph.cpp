// DistGraph: split by owner, answer locally or over RPC, merge in request order.
#include "graphloom/distributed/graph/dist_graph.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "graphloom/base/error.h"
#include "graphloom/base/fan_out.h"
#include "graphloom/base/timer.h"
#include "graphloom/distributed/rpc/part_sampling.h"
#include "graphloom/features/row_codec.h"
#include "graphloom/features/tensor_feature_source.h"

namespace graphloom::distributed {
namespace {

// The ids of each part and their positions in the request.
struct OwnerSplit {
  std::vector<at::Tensor> positions;  // int64, per part
  std::vector<at::Tensor> ids;        // int64, per part
};

// One counting pass instead of a sort: parts are few, and the split keeps request order within
// each part (the merge and the gathers rely on it).
OwnerSplit split_by_owner(const partition::PartitionBook& book, const at::Tensor& request) {
  const at::Tensor ids = request.contiguous();
  const at::Tensor owners = book.owner_of(ids).contiguous();
  const int64_t* owner = owners.data_ptr<int64_t>();
  const int64_t* id = ids.data_ptr<int64_t>();
  const int64_t n = ids.numel();
  std::vector<int64_t> next(static_cast<std::size_t>(book.num_parts()), 0);
  for (int64_t i = 0; i < n; ++i) ++next[owner[i]];
  OwnerSplit split;
  std::vector<int64_t*> positions, part_ids;
  for (const int64_t count : next) {
    split.positions.push_back(at::empty({count}, at::kLong));
    split.ids.push_back(at::empty({count}, at::kLong));
    positions.push_back(split.positions.back().data_ptr<int64_t>());
    part_ids.push_back(split.ids.back().data_ptr<int64_t>());
  }
  std::fill(next.begin(), next.end(), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t part = owner[i];
    const int64_t k = next[part]++;
    positions[part][k] = i;
    part_ids[part][k] = id[i];
  }
  return split;
}

// Runs `work(part)` for every part with ids: remote parts concurrently, the local one inline.
// Returns once all have ended; then rethrows the first failure. Parts without ids get Result{}.
template <typename Result, typename Work>
std::vector<Result> for_each_part(const OwnerSplit& split, int64_t local_part, Work&& work) {
  std::vector<int64_t> parts;
  for (std::size_t part = 0; part < split.ids.size(); ++part) {
    if (split.ids[part].numel() > 0) parts.push_back(static_cast<int64_t>(part));
  }
  auto slots = fan_out<Result>(split.ids.size(), parts, parts.size(), work, local_part);
  std::vector<Result> results(slots.size());
  for (std::size_t part = 0; part < slots.size(); ++part) {
    if (slots[part]) results[part] = std::move(*slots[part]);
  }
  return results;
}

// A client of every server, once each answers.
std::vector<std::vector<std::unique_ptr<PartClient>>> connect(
    const std::vector<std::vector<std::string>>& servers, const ClientOptions& options) {
  std::vector<std::vector<std::unique_ptr<PartClient>>> clients;
  for (std::size_t part = 0; part < servers.size(); ++part) {
    GL_CHECK(!servers[part].empty(), "no server address for part {}", part);
    clients.emplace_back();
    for (const std::string& address : servers[part]) {
      auto client = std::make_unique<GraphClient>(address, options);
      client->wait_until_serving(options.startup_timeout);
      clients.back().push_back(std::move(client));
    }
  }
  return clients;
}

ServerMetadata first_metadata(
    const std::vector<std::vector<std::unique_ptr<PartClient>>>& clients) {
  GL_CHECK(!clients.empty() && !clients[0].empty(),
           "DistGraph needs the servers of every part, got none");
  for (std::size_t part = 0; part < clients.size(); ++part) {
    GL_CHECK(!clients[part].empty(), "no server for part {}", part);
  }
  return clients[0][0]->metadata();
}

}  // namespace

DistGraph::DistGraph(const std::vector<std::vector<std::string>>& servers,
                     const ClientOptions& options, const partition::Partition* local_part)
    : DistGraph(connect(servers, options), local_part, options.outage_grace) {}

DistGraph::DistGraph(std::vector<std::vector<std::unique_ptr<PartClient>>> clients,
                     const partition::Partition* local_part, std::chrono::milliseconds outage_grace)
    : metadata_(first_metadata(clients)),
      clients_(std::move(clients)),
      book_(metadata_.node_range_ends),
      local_(local_part),
      outage_grace_(outage_grace) {
  next_server_ = std::make_unique<std::atomic<uint64_t>[]>(clients_.size());
  GL_CHECK(metadata_.num_parts == static_cast<int64_t>(clients_.size()),
           "graph '{}' has {} parts but servers were given for {}", metadata_.graph_name,
           metadata_.num_parts, clients_.size());
  for (std::size_t part = 0; part < clients_.size(); ++part) {
    for (const auto& client : clients_[part]) {
      const int64_t served = client->metadata().part;
      GL_CHECK(served == static_cast<int64_t>(part),
               "server {} serves part {}, but was given as a server of part {}", client->address(),
               served, part);
    }
  }
  if (local_ != nullptr) {
    GL_CHECK(local_->node_begin == book_.begin(local_->part) &&
                 local_->node_end == book_.end(local_->part),
             "the local part {} does not match the servers' partition book", local_->part);
  }
}

template <class Call>
auto DistGraph::on_live_server(int64_t part, std::size_t first, Call&& call) const {
  constexpr auto kPause = std::chrono::milliseconds(250);
  const double grace_seconds = std::chrono::duration<double>(outage_grace_).count();
  const auto& clients = clients_[part];
  const Timer waited;
  for (bool first_round = true;; first_round = false) {
    std::string failures;
    for (std::size_t k = 0; k < clients.size(); ++k) {
      const PartClient& client = *clients[(first + k) % clients.size()];
      try {
        return call(client);
      } catch (const ServerUnavailable& e) {
        failures += fmt::format("\n  {}", e.what());
        if (first_round && k + 1 < clients.size()) {
          spdlog::warn("{}: trying the next server of part {}", e.what(), part);
        }
      }
    }
    if (waited.seconds() + std::chrono::duration<double>(kPause).count() > grace_seconds) {
      GL_THROW("part {} has no live server left (of {}), after {:.1f} s of retries:{}", part,
               clients.size(), waited.seconds(), failures);
    }
    if (first_round) {
      spdlog::warn("part {} has no live server: trying again for up to {:.0f} s", part,
                   grace_seconds);
    }
    std::this_thread::sleep_for(kPause);
  }
}

template <class Call>
auto DistGraph::on_live_server(int64_t part, Call&& call) const {
  return on_live_server(part, next_server_[part]++ % clients_[part].size(),
                        std::forward<Call>(call));
}

sampling::SampledEdges DistGraph::sample_neighbors(const at::Tensor& seeds, int64_t fanout,
                                                   const sampling::SampleOptions& options) const {
  const at::Tensor ids = seeds.to(at::kLong).contiguous();
  const OwnerSplit split = split_by_owner(book_, ids);
  const int64_t local_part = local_ != nullptr ? local_->part : -1;
  const auto parts = for_each_part<sampling::SampledEdges>(split, local_part, [&](int64_t part) {
    sampling::SampleOptions part_options = options;
    if (options.seed_times.defined()) {  // each part gets its own seeds' times
      GL_CHECK(options.seed_times.numel() == ids.numel(), "seed_times: {} times for {} seeds",
               options.seed_times.numel(), ids.numel());
      part_options.seed_times = options.seed_times.index_select(0, split.positions[part]);
    }
    if (part != local_part)
      return on_live_server(part, [&](const PartClient& client) {
        return client.sample_neighbors(split.ids[part], fanout, part_options);
      });
    return sample_part_neighbors(
        *local_, metadata_.edge_range_ends[part] - local_->graph.num_edges(), split.ids[part],
        fanout, part_options, fmt::format("part {}", part));
  });
  // Merge in seed order: per-seed counts first, then each part's picks into place.
  const int64_t n = ids.numel();
  sampling::SampledEdges out;
  out.indptr = at::zeros({n + 1}, at::kLong);
  int64_t* indptr = out.indptr.data_ptr<int64_t>();
  for (std::size_t part = 0; part < parts.size(); ++part) {
    if (split.ids[part].numel() == 0) continue;
    const int64_t* position = split.positions[part].data_ptr<int64_t>();
    const int64_t* part_indptr = parts[part].indptr.data_ptr<int64_t>();
    for (int64_t j = 0; j < split.ids[part].numel(); ++j) {
      indptr[position[j] + 1] = part_indptr[j + 1] - part_indptr[j];
    }
  }
  for (int64_t i = 0; i < n; ++i) indptr[i + 1] += indptr[i];
  out.neighbors = at::empty({indptr[n]}, at::kLong);
  if (options.edge_ids) out.edge_ids = at::empty({indptr[n]}, at::kLong);
  int64_t* neighbors = out.neighbors.data_ptr<int64_t>();
  int64_t* edge_ids = options.edge_ids ? out.edge_ids.data_ptr<int64_t>() : nullptr;
  // Typed graphs: every part that answered reports its picks' edge types.
  bool typed = false;
  for (std::size_t part = 0; part < parts.size(); ++part) {
    if (split.ids[part].numel() > 0) typed = typed || parts[part].edge_types.defined();
  }
  if (typed) out.edge_types = at::empty({indptr[n]}, at::kLong);
  int64_t* edge_types = typed ? out.edge_types.data_ptr<int64_t>() : nullptr;
  for (std::size_t part = 0; part < parts.size(); ++part) {
    if (split.ids[part].numel() == 0) continue;
    const int64_t* position = split.positions[part].data_ptr<int64_t>();
    const int64_t* part_indptr = parts[part].indptr.data_ptr<int64_t>();
    const int64_t* part_neighbors = parts[part].neighbors.data_ptr<int64_t>();
    const int64_t* part_edge_ids = edge_ids ? parts[part].edge_ids.data_ptr<int64_t>() : nullptr;
    GL_CHECK(!typed || parts[part].edge_types.defined(),
             "part {} returned no edge types, but other parts of the graph are typed", part);
    const int64_t* part_types = typed ? parts[part].edge_types.data_ptr<int64_t>() : nullptr;
    for (int64_t j = 0; j < split.ids[part].numel(); ++j) {
      const int64_t count = part_indptr[j + 1] - part_indptr[j];
      std::copy_n(part_neighbors + part_indptr[j], count, neighbors + indptr[position[j]]);
      if (edge_ids)
        std::copy_n(part_edge_ids + part_indptr[j], count, edge_ids + indptr[position[j]]);
      if (typed) std::copy_n(part_types + part_indptr[j], count, edge_types + indptr[position[j]]);
    }
  }
  return out;
}

const TensorSchema& DistGraph::schema(const std::string& name) const {
  const auto it = metadata_.tensors.find(name);
  GL_CHECK(it != metadata_.tensors.end(), "the distributed graph has no node tensor named '{}'",
           name);
  return it->second;
}

bool DistGraph::decodes(const std::string& name) const {
  return features::decodes_to_float(schema(name).dtype,
                                    metadata_.tensors.count(features::row_scale_name(name)) > 0);
}

features::FeatureInfo DistGraph::info(const std::string& name) const {
  const TensorSchema& s = schema(name);
  return {decodes(name) ? at::kFloat : s.dtype, s.row_shape, book_.num_nodes()};
}

void DistGraph::gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const {
  if (!decodes(name)) {
    gather_stored(name, ids, out);
    return;
  }
  // Encoded rows travel as stored (fewer bytes) with their scales, and are decoded here.
  const TensorSchema& s = schema(name);
  const int64_t n = ids.numel();
  std::vector<int64_t> shape{n};
  shape.insert(shape.end(), s.row_shape.begin(), s.row_shape.end());
  GL_CHECK(out.sizes() == at::IntArrayRef(shape) && out.scalar_type() == at::kFloat &&
               out.is_contiguous(),
           "gather of '{}': output must be a contiguous float32 tensor of shape {}", name,
           at::IntArrayRef(shape));
  features::EncodedRows rows{at::empty(shape, s.dtype), {}};
  gather_stored(name, ids, rows.values);
  const std::string scale = features::row_scale_name(name);
  if (metadata_.tensors.count(scale)) {
    rows.row_scale = at::empty({n}, at::kFloat);
    gather_stored(scale, ids, rows.row_scale);
  }
  features::gather_decoded_rows(rows, at::arange(n, at::kLong), out);
}

void DistGraph::gather_stored(const std::string& name, const at::Tensor& ids,
                              at::Tensor& out) const {
  const TensorSchema& s = schema(name);
  std::vector<int64_t> shape{ids.numel()};
  shape.insert(shape.end(), s.row_shape.begin(), s.row_shape.end());
  GL_CHECK(
      out.sizes() == at::IntArrayRef(shape) && out.scalar_type() == s.dtype && out.is_contiguous(),
      "gather of '{}': output must be a contiguous {} tensor of shape {}", name,
      c10::toString(s.dtype), at::IntArrayRef(shape));
  const at::Tensor all = ids.to(at::kLong).contiguous();
  const OwnerSplit split = split_by_owner(book_, all);
  const int64_t local_part = local_ != nullptr ? local_->part : -1;
  // Rows land in their final place in `out` straight from the local table or from each RPC
  // response: no per-part tensors to assemble and scatter afterwards.
  const int64_t row_bytes = s.row_bytes();
  auto* destination = static_cast<char*>(out.data_ptr());
  for_each_part<bool>(split, local_part, [&](int64_t part) {
    const int64_t* position = split.positions[part].data_ptr<int64_t>();
    if (!reads_locally(part, name)) {
      pulled_bytes_ += split.ids[part].numel() * row_bytes;
      // A retry on another server writes the same rows again: idempotent.
      on_live_server(part, [&](const PartClient& client) {
        client.pull_into(name, split.ids[part], s,
                         [&](int64_t first, const char* rows, int64_t count) {
                           for (int64_t r = 0; r < count; ++r) {
                             std::memcpy(destination + position[first + r] * row_bytes,
                                         rows + r * row_bytes, row_bytes);
                           }
                         });
      });
      return true;
    }
    const at::Tensor& table = *local_table(name);
    GL_CHECK(table.is_contiguous() && table.scalar_type() == s.dtype &&
                 table.sizes().slice(1) == at::IntArrayRef(s.row_shape),
             "local table '{}' is not a contiguous {} tensor with rows of shape {}", name,
             c10::toString(s.dtype), at::IntArrayRef(s.row_shape));
    features::gather_rows(table, split.ids[part] - local_->node_begin, out, split.positions[part]);
    return true;
  });
}

const at::Tensor* DistGraph::local_table(const std::string& name) const {
  if (local_ == nullptr) return nullptr;
  if (name == "label") return local_->labels.defined() ? &local_->labels : nullptr;
  if (const auto it = local_->features.find(name); it != local_->features.end()) return &it->second;
  for (const auto& [feature, scale] : local_->feature_scales) {
    if (name == features::row_scale_name(feature)) return &scale;
  }
  return nullptr;
}

bool DistGraph::reads_locally(int64_t part, const std::string& name) const {
  return local_ != nullptr && part == local_->part && local_table(name) != nullptr;
}

void DistGraph::create_tensor(const std::string& name, const TensorSchema& schema,
                              const TensorInit& init) {
  for (std::size_t part = 0; part < clients_.size(); ++part) {
    // One server per part (the first live one): the servers of a machine share run-time
    // tensors in shared memory.
    on_live_server(static_cast<int64_t>(part), 0,
                   [&](const PartClient& client) { client.create_tensor(name, schema, init); });
  }
  metadata_.tensors[name] = schema;
}

void DistGraph::sparse_update(const std::string& name, const at::Tensor& ids,
                              const at::Tensor& grads,
                              const SparseOptimizerOptions& optimizer) const {
  const at::Tensor all = ids.to(at::kLong).contiguous();
  GL_CHECK(grads.dim() == 2 && grads.size(0) == all.numel(),
           "sparse update of '{}': {} ids but gradient of shape {}", name, all.numel(),
           grads.sizes());
  const OwnerSplit split = split_by_owner(book_, all);
  for_each_part<bool>(split, /*local_part=*/-1, [&](int64_t part) {
    clients_[part][0]->sparse_update(name, split.ids[part],
                                     grads.index_select(0, split.positions[part]), optimizer);
    return true;
  });
}

DistEmbedding::DistEmbedding(DistGraph& graph, std::string name, int64_t dim,
                             SparseOptimizerOptions optimizer, float init_scale, uint64_t seed)
    : graph_(&graph), name_(std::move(name)), dim_(dim), optimizer_(std::move(optimizer)) {
  GL_CHECK(dim > 0, "embedding dimension must be positive, got {}", dim);
  GL_CHECK(optimizer_.kind == "adam" || optimizer_.kind == "adagrad",
           "unknown sparse optimizer '{}' (expected adam or adagrad)", optimizer_.kind);
  const TensorSchema rows{at::kFloat, {dim}};
  graph.create_tensor(name_, rows, {.low = -init_scale, .high = init_scale, .seed = seed});
  if (optimizer_.kind == "adagrad") {
    graph.create_tensor(name_ + "-adagrad-sum", rows);
  } else {
    graph.create_tensor(name_ + "-adam-m", rows);
    graph.create_tensor(name_ + "-adam-v", rows);
    graph.create_tensor(name_ + "-adam-step", {at::kFloat, {1}});
  }
}

void DistEmbedding::step(const at::Tensor& ids, const at::Tensor& grads) const {
  GL_CHECK(grads.dim() == 2 && grads.size(0) == ids.numel() && grads.size(1) == dim_,
           "embedding '{}': expected gradient [{}, {}], got {}", name_, ids.numel(), dim_,
           grads.sizes());
  // Repeated ids (a node in several places of a batch) become one row with the summed gradient.
  const auto [unique, inverse] = at::_unique(ids.to(at::kLong), /*sorted=*/true,
                                             /*return_inverse=*/true);
  const at::Tensor summed =
      at::zeros({unique.numel(), dim_}, at::kFloat).index_add_(0, inverse, grads.to(at::kFloat));
  graph_->sparse_update(name_, unique, summed, optimizer_);
}

std::vector<std::string> DistEmbedding::tensor_names() const {
  if (optimizer_.kind == "adagrad") return {name_, name_ + "-adagrad-sum"};
  return {name_, name_ + "-adam-m", name_ + "-adam-v", name_ + "-adam-step"};
}

std::map<std::string, at::Tensor> DistEmbedding::state() const {
  const at::Tensor all = at::arange(graph_->num_nodes(), at::kLong);
  std::map<std::string, at::Tensor> out;
  for (const std::string& name : tensor_names()) out[name] = graph_->gather(name, all);
  return out;
}

void DistEmbedding::load_state(const std::map<std::string, at::Tensor>& state) const {
  for (const std::string& name : tensor_names()) {  // all checked before anything is written
    const auto found = state.find(name);
    GL_CHECK(found != state.end(), "the checkpoint holds no '{}' for embedding '{}' ({} rows)",
             name, name_, optimizer_.kind);
    const std::vector<int64_t> expected = graph_->info(name).row_shape;
    const at::Tensor& rows = found->second;
    GL_CHECK(rows.dim() == 1 + static_cast<int64_t>(expected.size()) &&
                 rows.size(0) == graph_->num_nodes() && rows.sizes().slice(1).vec() == expected,
             "the checkpoint's '{}' of embedding '{}' is {}, expected [{}] + {}", name, name_,
             rows.sizes(), graph_->num_nodes(), c10::IntArrayRef(expected));
  }
  const at::Tensor all = at::arange(graph_->num_nodes(), at::kLong);
  for (const std::string& name : tensor_names()) graph_->push(name, all, state.at(name));
}

DistTensor::DistTensor(DistGraph& graph, std::string name, const TensorSchema& schema)
    : graph_(&graph), name_(std::move(name)) {
  graph.create_tensor(name_, schema);
}

void DistGraph::push(const std::string& name, const at::Tensor& ids, const at::Tensor& rows) const {
  schema(name);
  const at::Tensor all = ids.to(at::kLong).contiguous();
  GL_CHECK(rows.size(0) == all.numel(), "push of '{}': {} ids but {} rows", name, all.numel(),
           rows.size(0));
  const OwnerSplit split = split_by_owner(book_, all);
  // Every part over RPC, the local one too: its server holds the table that others read.
  for_each_part<bool>(split, /*local_part=*/-1, [&](int64_t part) {
    on_live_server(part, [&](const PartClient& client) {
      client.push(name, split.ids[part], rows.index_select(0, split.positions[part]));
    });
    return true;
  });
}

}  // namespace graphloom::distributed
