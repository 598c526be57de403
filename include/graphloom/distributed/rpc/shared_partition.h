// One part of a partitioned graph in named POSIX shared memory: the main server of a machine
// publishes it once, and its backup servers and the trainers of that machine map the same
// pages (one copy in RAM however many processes read it, and pushes are seen by all).
//
// Segments are named "graphloom-<cluster>-p<part>-<array>"; a manifest segment, written last,
// lists them and marks the part as ready.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "graphloom/base/shared_memory.h"

#include <ATen/core/Tensor.h>
#include "graphloom/partition/partition_format.h"

namespace graphloom::distributed {

class SharedPartition {
 public:
  // Copies `part`'s graph, features and labels into new segments. Stale segments of the same
  // cluster and part (left by a killed server) are removed first. The segments are removed
  // again when the returned object is destroyed.
  static std::unique_ptr<SharedPartition> publish(const partition::Partition& part,
                                                  const std::string& cluster, int64_t part_id);
  // Maps the segments published for (cluster, part), waiting up to `timeout` for the manifest.
  // Stops waiting at once when the part's main server recorded a failed start
  // (record_failure): the error then carries that server's own message.
  static std::unique_ptr<SharedPartition> attach(const std::string& cluster, int64_t part_id,
                                                 std::chrono::milliseconds timeout);
  // Whether (cluster, part) is published: its manifest, written last, exists.
  static bool published(const std::string& cluster, int64_t part_id);
  // Records that the main server of (cluster, part) failed to start, with its message, in a
  // small segment of the part ("<prefix>failure") that attach() reads; publish() and
  // remove_segments() clear it. Never throws: it runs while another error is on its way out.
  static void record_failure(const std::string& cluster, int64_t part_id,
                             const std::string& message) noexcept;
  // Removes a recorded failure (a main server starting again); never throws.
  static void clear_failure(const std::string& cluster, int64_t part_id) noexcept;
  // Removes every segment of (cluster, part); returns how many there were.
  static int remove_segments(const std::string& cluster, int64_t part_id);

  // The part with its tensors over the shared pages (orig ids and splits are not shared).
  const partition::Partition& part() const { return part_; }

  // A node tensor created at run time ([owned nodes, row_shape...], zeros), in its own segment
  // so that every server and trainer of the machine finds it by name. Creating an existing
  // tensor with the same schema returns it; with another schema throws.
  at::Tensor create_tensor(const std::string& name, c10::ScalarType dtype,
                           const std::vector<int64_t>& row_shape) const;
  // The run-time tensor `name`, or an undefined tensor when nobody created it.
  at::Tensor find_tensor(const std::string& name) const;
  ~SharedPartition();
  SharedPartition(const SharedPartition&) = delete;
  SharedPartition& operator=(const SharedPartition&) = delete;

 private:
  SharedPartition() = default;
  partition::Partition part_;
  std::string cluster_;
  int64_t part_id_ = 0;
  bool owner_ = false;  // published by this process: removes the names when destroyed
  std::vector<std::shared_ptr<SharedMemorySegment>> segments_;
};

// Run-time tensor names: 1-64 letters, digits, '-' or '_' (they name shared-memory files).
void check_tensor_name(const std::string& name);

// The name prefix of (cluster, part)'s segments; throws for a cluster id with characters other
// than letters, digits, '-' and '_'.
std::string segment_prefix(const std::string& cluster, int64_t part_id);

}  // namespace graphloom::distributed
