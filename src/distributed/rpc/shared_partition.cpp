// Publishing and attaching a part in shared memory (shared_memory_directory()).
#include "graphloom/distributed/rpc/shared_partition.h"

#include <ATen/ATen.h>

#include <spdlog/spdlog.h>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "graphloom/base/dtype.h"
#include "graphloom/base/error.h"

namespace graphloom::distributed {
namespace {

// The tensors of a part that are shared, by segment suffix.
std::vector<std::pair<std::string, at::Tensor*>> shared_arrays(partition::Partition& part) {
  std::vector<std::pair<std::string, at::Tensor*>> arrays{{"indptr", &part.graph.indptr},
                                                          {"indices", &part.graph.indices}};
  if (part.graph.weights.defined()) arrays.emplace_back("weights", &part.graph.weights);
  if (part.graph.weight_alias.defined())
    arrays.emplace_back("weight-alias", &part.graph.weight_alias);
  if (part.graph.type_per_edge.defined()) {
    arrays.emplace_back("type-per-edge", &part.graph.type_per_edge);
  }
  if (part.graph.edge_time.defined()) arrays.emplace_back("edge-time", &part.graph.edge_time);
  if (part.node_timestamp.defined()) arrays.emplace_back("node-timestamp", &part.node_timestamp);
  if (part.out_graph.indptr.defined()) {
    arrays.emplace_back("out-indptr", &part.out_graph.indptr);
    arrays.emplace_back("out-indices", &part.out_graph.indices);
    arrays.emplace_back("out-edge-ids", &part.out_graph.edge_ids);
    if (part.out_graph.weights.defined())
      arrays.emplace_back("out-weights", &part.out_graph.weights);
    if (part.out_graph.weight_alias.defined())
      arrays.emplace_back("out-weight-alias", &part.out_graph.weight_alias);
    if (part.out_graph.type_per_edge.defined())
      arrays.emplace_back("out-type-per-edge", &part.out_graph.type_per_edge);
  }
  if (part.labels.defined()) arrays.emplace_back("labels", &part.labels);
  for (auto& [name, tensor] : part.features) arrays.emplace_back("feature-" + name, &tensor);
  for (auto& [name, tensor] : part.feature_scales)
    arrays.emplace_back("row-scale-" + name, &tensor);
  return arrays;
}

// A tensor over `segment`'s pages from byte `offset` on; it keeps the mapping alive.
at::Tensor over_segment(const std::shared_ptr<SharedMemorySegment>& segment, at::IntArrayRef shape,
                        at::ScalarType dtype, std::size_t offset = 0) {
  std::size_t bytes = c10::elementSize(dtype);
  for (const int64_t size : shape) bytes *= static_cast<std::size_t>(size);
  GL_CHECK(segment->size() >= offset + bytes, "shared segment '{}' is truncated ({} of {} bytes)",
           segment->name(), segment->size(), offset + bytes);
  return at::from_blob(
      segment->data() + offset, shape, [segment](void*) {}, at::TensorOptions().dtype(dtype));
}

}  // namespace

// Names that become part of segment file names: 1-64 letters, digits, '-' or '_'.
void check_segment_word(const std::string& word, const char* what) {
  GL_CHECK(!word.empty() && word.size() <= 64 &&
               std::all_of(word.begin(), word.end(),
                           [](char c) {
                             return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                                    c == '_';
                           }),
           "{} '{}' must be 1-64 letters, digits, '-' or '_'", what, word);
}

void check_tensor_name(const std::string& name) { check_segment_word(name, "tensor name"); }

std::string segment_prefix(const std::string& cluster, int64_t part_id) {
  check_segment_word(cluster, "cluster id");
  return fmt::format("graphloom-{}-p{}-", cluster, part_id);
}

int SharedPartition::remove_segments(const std::string& cluster, int64_t part_id) {
  const std::string prefix = segment_prefix(cluster, part_id);
  int removed = 0;
  std::error_code ignored;
  for (const auto& entry :
       std::filesystem::directory_iterator(shared_memory_directory(), ignored)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && SharedMemorySegment::remove(name)) ++removed;
  }
  return removed;
}

std::unique_ptr<SharedPartition> SharedPartition::publish(const partition::Partition& source,
                                                          const std::string& cluster,
                                                          int64_t part_id) {
  const std::string prefix = segment_prefix(cluster, part_id);
  remove_segments(cluster, part_id);  // what a killed server left behind
  std::unique_ptr<SharedPartition> shared(new SharedPartition());
  shared->cluster_ = cluster;
  shared->part_id_ = part_id;
  shared->owner_ = true;  // from here on, a failure removes what was created
  shared->part_ = source;
  nlohmann::json manifest = {{"part", part_id},
                             {"node_begin", source.node_begin},
                             {"node_end", source.node_end},
                             {"num_nodes", source.graph.num_nodes},
                             {"weights_positive", source.graph.weight_alias_all_positive},
                             {"out_weights_positive", source.out_graph.weight_alias_all_positive},
                             {"arrays", nlohmann::json::array()}};
  for (auto& [key, tensor] : shared_arrays(shared->part_)) {
    const at::Tensor data = tensor->contiguous();
    auto segment = std::shared_ptr<SharedMemorySegment>(
        SharedMemorySegment::create(prefix + key, std::max<std::size_t>(data.nbytes(), 1)));
    segment->release_ownership();  // removed by prefix in ~SharedPartition
    if (data.nbytes() > 0) std::memcpy(segment->data(), data.data_ptr(), data.nbytes());
    *tensor = over_segment(segment, data.sizes(), data.scalar_type());
    shared->segments_.push_back(segment);
    manifest["arrays"].push_back(
        {{"key", key}, {"dtype", dtype_name(data.scalar_type())}, {"shape", data.sizes().vec()}});
  }
  // Written under another name and renamed: a reader never sees a half-written manifest.
  const std::string text = manifest.dump();
  auto segment = std::shared_ptr<SharedMemorySegment>(
      SharedMemorySegment::create(prefix + "writing-manifest", text.size()));
  segment->release_ownership();
  std::memcpy(segment->data(), text.data(), text.size());
  SharedMemorySegment::rename(prefix + "writing-manifest", prefix + "manifest");
  shared->segments_.push_back(segment);
  if (const std::string directory = shared_memory_directory();
      !shared_memory_on_huge_pages(directory)) {
    spdlog::info(
        "part {} is shared from {} on 4 KB pages; sampling and feature reads run faster from a "
        "tmpfs mounted with huge=within_size (graphloom --shm-dir)",
        part_id, directory);
  }
  return shared;
}

namespace {

// A run-time tensor's segment: a JSON schema in the first kHeaderBytes, then the rows.
constexpr std::size_t kHeaderBytes = 4096;

std::string tensor_segment(const std::string& prefix, const std::string& name) {
  check_tensor_name(name);
  return prefix + "tensor-" + name;
}

at::Tensor tensor_in(const std::shared_ptr<SharedMemorySegment>& segment) {
  const char* header = reinterpret_cast<const char*>(segment->data());
  const auto schema = nlohmann::json::parse(std::string(header, strnlen(header, kHeaderBytes)));
  return over_segment(segment, schema.at("shape").get<std::vector<int64_t>>(),
                      dtype_from_name(schema.at("dtype").get<std::string>()), kHeaderBytes);
}

}  // namespace

at::Tensor SharedPartition::create_tensor(const std::string& name, c10::ScalarType dtype,
                                          const std::vector<int64_t>& row_shape) const {
  const std::string segment_name = tensor_segment(segment_prefix(cluster_, part_id_), name);
  std::vector<int64_t> shape{part_.node_end - part_.node_begin};
  shape.insert(shape.end(), row_shape.begin(), row_shape.end());
  if (at::Tensor existing = find_tensor(name); existing.defined()) {
    GL_CHECK(existing.sizes() == at::IntArrayRef(shape) && existing.scalar_type() == dtype,
             "tensor '{}' already exists with shape {} and dtype {}", name, existing.sizes(),
             dtype_name(existing.scalar_type()));
    return existing;
  }
  int64_t bytes = static_cast<int64_t>(c10::elementSize(dtype));
  for (const int64_t size : shape) bytes *= size;
  const std::string schema = nlohmann::json{{"dtype", dtype_name(dtype)}, {"shape", shape}}.dump();
  // Written under a temporary name and renamed, like the manifest: never seen half-made.
  const std::string writing = segment_name + ".writing";
  auto segment = std::shared_ptr<SharedMemorySegment>(SharedMemorySegment::create(
      writing, kHeaderBytes + static_cast<std::size_t>(bytes)));  // zero-filled by the kernel
  segment->release_ownership();
  std::memcpy(segment->data(), schema.data(), schema.size());
  SharedMemorySegment::rename(writing, segment_name);
  return tensor_in(segment);
}

at::Tensor SharedPartition::find_tensor(const std::string& name) const {
  const std::string segment_name = tensor_segment(segment_prefix(cluster_, part_id_), name);
  if (!SharedMemorySegment::exists(segment_name)) return {};
  return tensor_in(std::shared_ptr<SharedMemorySegment>(SharedMemorySegment::open(segment_name)));
}

SharedPartition::~SharedPartition() {
  if (!owner_) return;
  try {
    remove_segments(cluster_, part_id_);
  } catch (const std::exception& e) {  // a destructor must not throw: say what is left
    spdlog::warn("part {}: cannot remove its shared-memory segments: {}", part_id_, e.what());
  }
}

void SharedPartition::record_failure(const std::string& cluster, int64_t part_id,
                                     const std::string& message) noexcept {
  try {
    const std::string prefix = segment_prefix(cluster, part_id);
    const std::string text = message.empty() ? "unknown error" : message;
    SharedMemorySegment::remove(prefix + "failure");
    auto segment = SharedMemorySegment::create(prefix + "writing-failure", text.size());
    segment->release_ownership();
    std::memcpy(segment->data(), text.data(), text.size());
    SharedMemorySegment::rename(prefix + "writing-failure", prefix + "failure");
  } catch (const std::exception& e) {
    spdlog::warn("part {}: cannot record the server's failure for its trainers: {}", part_id,
                 e.what());
  }
}

void SharedPartition::clear_failure(const std::string& cluster, int64_t part_id) noexcept {
  try {
    SharedMemorySegment::remove(segment_prefix(cluster, part_id) + "failure");
  } catch (const std::exception&) {  // an invalid cluster id: the start itself says so
  }
}

bool SharedPartition::published(const std::string& cluster, int64_t part_id) {
  return SharedMemorySegment::exists(segment_prefix(cluster, part_id) + "manifest");
}

std::unique_ptr<SharedPartition> SharedPartition::attach(const std::string& cluster,
                                                         int64_t part_id,
                                                         std::chrono::milliseconds timeout) {
  const std::string prefix = segment_prefix(cluster, part_id);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!SharedMemorySegment::exists(prefix + "manifest")) {
    if (SharedMemorySegment::exists(prefix + "failure")) {
      const auto failure = SharedMemorySegment::open(prefix + "failure");
      const auto age =
          std::filesystem::file_time_type::clock::now() -
          std::filesystem::last_write_time(SharedMemorySegment::path(prefix + "failure"));
      GL_THROW(
          "part {} of cluster '{}' is not served on this machine: its main server failed "
          "to start ({:.0f} s ago): {}",
          part_id, cluster, std::chrono::duration<double>(age).count(),
          std::string(reinterpret_cast<const char*>(failure->data()), failure->size()));
    }
    GL_CHECK(std::chrono::steady_clock::now() < deadline,
             "part {} of cluster '{}' was not published in shared memory within {} ms: is its "
             "main server (`graphloom serve --part {}` with cluster id '{}') running on this "
             "machine? Its log says why it is not; no segment '{}manifest' is in {}",
             part_id, cluster, timeout.count(), part_id, cluster, prefix,
             shared_memory_directory());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::unique_ptr<SharedPartition> shared(new SharedPartition());
  shared->cluster_ = cluster;
  shared->part_id_ = part_id;
  std::shared_ptr<SharedMemorySegment> manifest_segment =
      SharedMemorySegment::open(prefix + "manifest");
  const auto manifest = nlohmann::json::parse(std::string(
      reinterpret_cast<const char*>(manifest_segment->data()), manifest_segment->size()));
  partition::Partition& part = shared->part_;
  part.part = manifest.at("part").get<int64_t>();
  part.node_begin = manifest.at("node_begin").get<int64_t>();
  part.node_end = manifest.at("node_end").get<int64_t>();
  part.graph.num_nodes = manifest.at("num_nodes").get<int64_t>();
  part.graph.weight_alias_all_positive = manifest.value("weights_positive", false);
  part.out_graph.weight_alias_all_positive = manifest.value("out_weights_positive", false);
  for (const auto& array : manifest.at("arrays")) {
    const std::string key = array.at("key").get<std::string>();
    auto segment = std::shared_ptr<SharedMemorySegment>(SharedMemorySegment::open(prefix + key));
    const at::Tensor tensor = over_segment(segment, array.at("shape").get<std::vector<int64_t>>(),
                                           dtype_from_name(array.at("dtype").get<std::string>()));
    if (key == "indptr") {
      part.graph.indptr = tensor;
    } else if (key == "indices") {
      part.graph.indices = tensor;
    } else if (key == "weights") {
      part.graph.weights = tensor;
    } else if (key == "weight-alias") {
      part.graph.weight_alias = tensor;
    } else if (key == "type-per-edge") {
      part.graph.type_per_edge = tensor;
    } else if (key == "edge-time") {
      part.graph.edge_time = tensor;
    } else if (key == "node-timestamp") {
      part.node_timestamp = tensor;
    } else if (key == "out-indptr") {
      part.out_graph.indptr = tensor;
      part.out_graph.num_nodes = part.graph.num_nodes;
    } else if (key == "out-indices") {
      part.out_graph.indices = tensor;
    } else if (key == "out-edge-ids") {
      part.out_graph.edge_ids = tensor;
    } else if (key == "out-weights") {
      part.out_graph.weights = tensor;
    } else if (key == "out-weight-alias") {
      part.out_graph.weight_alias = tensor;
    } else if (key == "out-type-per-edge") {
      part.out_graph.type_per_edge = tensor;
    } else if (key == "labels") {
      part.labels = tensor;
    } else if (key.rfind("feature-", 0) == 0) {
      part.features[key.substr(8)] = tensor;
    } else if (key.rfind("row-scale-", 0) == 0) {
      part.feature_scales[key.substr(10)] = tensor;
    }
    shared->segments_.push_back(segment);
  }
  shared->segments_.push_back(manifest_segment);
  return shared;
}

}  // namespace graphloom::distributed
