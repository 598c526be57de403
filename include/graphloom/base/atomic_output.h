// Outputs that appear complete or not at all: written under a temporary name in the same
// directory and renamed into place by commit(). Destroyed without commit (an exception, a
// failed write), the temporary is removed, so no half-written file or directory is left.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace graphloom {

// Every write, the fsync, the close and the rename are checked: a full disk (ENOSPC) or an I/O
// error (EIO) throws graphloom::Error naming the file and the reason, and the temporary is
// removed. A `durable` file is on disk with its name once commit() returns (file and directory
// fsynced): a crash or power loss then keeps the new file, before it the old one. Checkpoints
// are durable; outputs rebuilt by rerunning their command need not pay the syncs.
class AtomicFile {
 public:
  // `what` names the file in errors ("checkpoint": "cannot write checkpoint '<path>': ...").
  explicit AtomicFile(std::filesystem::path path, bool durable = false, std::string what = "");
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t size);
  // Syncs, closes and renames the temporary onto the final path, then syncs the directory.
  void commit();
  const std::filesystem::path& temporary_path() const { return temp_path_; }

 private:
  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  bool durable_;
  std::string what_;
  int fd_ = -1;
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
