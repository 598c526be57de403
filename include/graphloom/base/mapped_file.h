// RAII read-only memory mapping of a whole file: the zero-copy backing of `.npy` tensors.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

namespace graphloom {

class MappedFile {
 public:
  // Maps `path` privately (copy-on-write: in-place tensor ops never reach the file).
  // Throws graphloom::Error naming the file when it cannot be opened or mapped.
  static std::shared_ptr<MappedFile> open(const std::filesystem::path& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  std::byte* mutable_data() { return data_; }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile(std::filesystem::path path, std::byte* data, std::size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::filesystem::path path_;
  std::byte* data_;
  std::size_t size_;
};

// Tells the kernel that the `bytes` at `data` (inside a file mapping) are read at random, so a
// page fault reads only its page: with the default read-ahead, every row of a feature table
// larger than memory would pull in tens of unrelated rows. Best effort (errors are ignored).
void advise_random_access(const void* data, std::size_t bytes);

}  // namespace graphloom
