// DiskFeatureSource: node rows read from `.npy` files on each gather, for feature tables larger
// than memory (GraphBolt's DiskBasedFeature). The rows of a gather are sorted, rows whose bytes
// touch are read as one extent, and the extents go to the kernel together: through io_uring
// with a deep queue, or pread on the OpenMP threads where io_uring is unavailable (logged
// once). With O_DIRECT (where the file system allows it) the reads bypass the page cache, so a
// table bigger than memory does not evict everything else; put a CachedFeatureSource in front
// to keep the hot rows.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "graphloom/features/feature_source.h"

namespace graphloom::features {

class ExtentReader;
class ReadBuffers;

struct DiskFeatureOptions {
  bool direct_io = true;  // O_DIRECT where the file system takes it, else the page cache
  bool io_uring = true;   // false: pread on the OpenMP threads
  int queue_depth = 64;   // io_uring reads in flight per gathering thread
};

class DiskFeatureSource : public FeatureSource {
 public:
  // One table per file (`name` -> `.npy` path), opened and checked now: a file shorter than
  // its header says is an Error naming it.
  DiskFeatureSource(const std::map<std::string, std::filesystem::path>& files,
                    DiskFeatureOptions options = {});
  ~DiskFeatureSource() override;

  bool has(const std::string& name) const override { return tables_.count(name) > 0; }
  FeatureInfo info(const std::string& name) const override;
  using FeatureSource::gather;
  void gather(const std::string& name, const at::Tensor& ids, at::Tensor& out) const override;

  // "io_uring" or "pread".
  const char* reader() const;
  // Bytes read from the files since construction (O_DIRECT reads whole blocks).
  int64_t bytes_read() const { return bytes_read_.load(); }

 private:
  struct Table;
  const Table& table(const std::string& name) const;

  std::map<std::string, std::unique_ptr<Table>> tables_;
  std::unique_ptr<ExtentReader> reader_;
  std::unique_ptr<ReadBuffers> buffers_;  // kept between gathers (read_buffers.h)
  mutable std::atomic<int64_t> bytes_read_{0};
};

}  // namespace graphloom::features
