// Outputs that appear complete or not at all: written under a temporary name in the same
// directory and renamed into place by commit(). Destroyed without commit (an exception, a
// failed write), the temporary is removed, so no half-written file or directory is left.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>

namespace graphloom {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t size);
  // Flushes, closes and renames the temporary onto the final path.
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  std::ofstream out_;
  bool committed_ = false;
};

class AtomicDirectory {
 public:
  // Refuses an existing `path` unless `overwrite` (then it is replaced at commit time).
  AtomicDirectory(std::filesystem::path path, bool overwrite);
  ~AtomicDirectory();
  AtomicDirectory(const AtomicDirectory&) = delete;
  AtomicDirectory& operator=(const AtomicDirectory&) = delete;

  // Where to write the contents until commit().
  const std::filesystem::path& staging() const { return temp_path_; }
  const std::filesystem::path& path() const { return path_; }
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  bool overwrite_;
  bool committed_ = false;
};

// A sibling name of `path` unique to this process and call: "<path>.tmp-<pid>-<n>".
std::filesystem::path temporary_sibling(const std::filesystem::path& path);

}  // namespace graphloom
