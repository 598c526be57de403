// RAII shared-memory segment: a file in a tmpfs directory (/dev/shm unless GRAPHLOOM_SHM_DIR
// names another), mapped shared. How a main server hands its partition to backup servers and
// trainers on the same machine without a copy.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace graphloom {

// The directory segments live in: GRAPHLOOM_SHM_DIR when set (`graphloom --shm-dir`), else
// /dev/shm. Every process of a machine must see the same one. A tmpfs mounted with
// huge=within_size backs parts with 2 MB pages, which random row reads and sampling need far
// fewer page-table entries (and TLB misses) for than /dev/shm's usual 4 KB pages.
std::string shared_memory_directory();

// Whether the tmpfs holding `directory` gives its files huge pages (its huge= mount option, or
// shmem_enabled "force"); false when unknown.
bool shared_memory_on_huge_pages(const std::string& directory);

class SharedMemorySegment {
 public:
  // Creates a new segment of `size` bytes; fails if `name` exists. The creator owns the name
  // and removes it on destruction unless release_ownership() is called.
  static std::unique_ptr<SharedMemorySegment> create(const std::string& name, std::size_t size);
  // Maps an existing segment read-write; does not own the name.
  static std::unique_ptr<SharedMemorySegment> open(const std::string& name);
  // Removes `name` if it exists (stale segments after a crash). Returns whether it existed.
  static bool remove(const std::string& name);
  static bool exists(const std::string& name);
  // Renames a segment atomically: readers see the old name or the complete new one.
  static void rename(const std::string& from, const std::string& to);
  // The file that holds segment `name`.
  static std::string path(const std::string& name);

  ~SharedMemorySegment();
  SharedMemorySegment(const SharedMemorySegment&) = delete;
  SharedMemorySegment& operator=(const SharedMemorySegment&) = delete;

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  bool owns_name() const { return owns_name_; }
  void release_ownership() { owns_name_ = false; }

 private:
  SharedMemorySegment(std::string name, std::string path, std::byte* data, std::size_t size,
                      bool owns_name)
      : name_(std::move(name)),
        path_(std::move(path)),
        data_(data),
        size_(size),
        owns_name_(owns_name) {}

  std::string name_;
  std::string path_;
  std::byte* data_;
  std::size_t size_;
  bool owns_name_;
};

}  // namespace graphloom
