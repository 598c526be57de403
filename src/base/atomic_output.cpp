// Write-then-rename for files and directories.
#include "graphloom/base/atomic_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "graphloom/base/error.h"

namespace graphloom {

namespace fs = std::filesystem;

namespace {

// "out/" and "out" name the same target; without the trailing slash a sibling name is
// "out.tmp-..", not "out/.tmp-..".
fs::path without_trailing_slash(const fs::path& path) {
  fs::path result = path.lexically_normal();
  if (!result.has_filename()) result = result.parent_path();
  return result;
}

// Makes a rename in `directory` durable. Best effort: a file system that cannot sync a
// directory (EINVAL) has nothing to sync.
void sync_directory(const fs::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

fs::path temporary_sibling(const fs::path& path) {
  static std::atomic<int> counter{0};
  fs::path result = without_trailing_slash(path);
  result += fmt::format(".tmp-{}-{}", ::getpid(), counter.fetch_add(1));
  return result;
}

AtomicFile::AtomicFile(fs::path path, bool durable, std::string what)
    : path_(std::move(path)),
      temp_path_(temporary_sibling(path_)),
      durable_(durable),
      what_(what.empty() ? "" : what + " ") {
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  GL_CHECK(fd_ >= 0, "cannot write {}'{}': cannot create '{}': {}", what_, path_.string(),
           temp_path_.string(), std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(temp_path_.c_str());
}

void AtomicFile::write(const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd_, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    GL_CHECK(written > 0, "cannot write {}'{}': {}", what_, path_.string(),
             written < 0 ? std::strerror(errno) : "the device accepted no bytes");
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
}

void AtomicFile::commit() {
  // Data reaches the disk before the name does: a rename that survives a crash never points
  // at a file whose blocks were lost.
  GL_CHECK(!durable_ || ::fsync(fd_) == 0, "cannot write {}'{}': {}", what_, path_.string(),
           std::strerror(errno));
  const int closed = ::close(fd_);
  fd_ = -1;
  GL_CHECK(closed == 0, "cannot write {}'{}': {}", what_, path_.string(), std::strerror(errno));
  std::error_code error;
  fs::rename(temp_path_, path_, error);
  GL_CHECK(!error, "cannot write {}'{}': cannot rename '{}' onto it: {}", what_, path_.string(),
           temp_path_.string(), error.message());
  committed_ = true;
  if (durable_) sync_directory(path_.parent_path().empty() ? fs::path(".") : path_.parent_path());
}

AtomicDirectory::AtomicDirectory(fs::path path, bool overwrite)
    : path_(without_trailing_slash(path)),
      temp_path_(temporary_sibling(path_)),
      overwrite_(overwrite) {
  if (fs::exists(path_)) {
    if (!overwrite_) {
      throw UsageError(fmt::format(
          "output directory '{}' already exists (pass --force to replace it)", path_.string()));
    }
  }
  std::error_code error;
  fs::create_directories(temp_path_, error);
  GL_CHECK(!error, "cannot create directory '{}': {}", temp_path_.string(), error.message());
}

AtomicDirectory::~AtomicDirectory() {
  if (!committed_) {
    std::error_code ignored;
    fs::remove_all(temp_path_, ignored);
  }
}

void AtomicDirectory::commit() {
  std::error_code error;
  fs::path replaced;
  if (fs::exists(path_)) {
    GL_CHECK(overwrite_, "output directory '{}' appeared while writing", path_.string());
    replaced = temporary_sibling(path_);
    fs::rename(path_, replaced, error);
    GL_CHECK(!error, "cannot move old '{}' aside: {}", path_.string(), error.message());
  }
  fs::rename(temp_path_, path_, error);
  if (error) {
    std::error_code ignored;
    if (!replaced.empty()) fs::rename(replaced, path_, ignored);  // put the old output back
    GL_THROW("cannot rename '{}' to '{}': {}", temp_path_.string(), path_.string(),
             error.message());
  }
  committed_ = true;
  if (!replaced.empty()) fs::remove_all(replaced, error);
}

}  // namespace graphloom
