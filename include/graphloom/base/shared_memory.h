// RAII POSIX shared-memory segment (/dev/shm): how a main server hands its partition to
// backup servers and trainers on the same machine without a copy.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace graphloom {

class SharedMemorySegment {
 public:
  // Creates a new segment of `size` bytes; fails if `name` exists. The creator owns the name
  // and removes it on destruction unless release_ownership() is called.
  static std::unique_ptr<SharedMemorySegment> create(const std::string& name, std::size_t size);
  // Maps an existing segment read-write; does not own the name.
  static std::unique_ptr<SharedMemorySegment> open(const std::string& name);
  // Removes `name` if it exists (stale segments after a crash). Returns whether it existed.
  static bool remove(const std::string& name);

  ~SharedMemorySegment();
  SharedMemorySegment(const SharedMemorySegment&) = delete;
  SharedMemorySegment& operator=(const SharedMemorySegment&) = delete;

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  bool owns_name() const { return owns_name_; }
  void release_ownership() { owns_name_ = false; }

 private:
  SharedMemorySegment(std::string name, std::byte* data, std::size_t size, bool owns_name)
      : name_(std::move(name)), data_(data), size_(size), owns_name_(owns_name) {}

  std::string name_;
  std::byte* data_;
  std::size_t size_;
  bool owns_name_;
};

}  // namespace graphloom
