// Write-then-rename for files and directories.
#include "graphloom/base/atomic_output.h"

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

}  // namespace

fs::path temporary_sibling(const fs::path& path) {
  static std::atomic<int> counter{0};
  fs::path result = without_trailing_slash(path);
  result += fmt::format(".tmp-{}-{}", ::getpid(), counter.fetch_add(1));
  return result;
}

AtomicFile::AtomicFile(fs::path path)
    : path_(std::move(path)), temp_path_(temporary_sibling(path_)) {
  out_.open(temp_path_, std::ios::binary | std::ios::trunc);
  GL_CHECK(out_.good(), "cannot create '{}': {}", temp_path_.string(), std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ignored;
    fs::remove(temp_path_, ignored);
  }
}

void AtomicFile::write(const void* data, std::size_t size) {
  out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  GL_CHECK(out_.good(), "write to '{}' failed ({} bytes): {}", path_.string(), size,
           std::strerror(errno));
}

void AtomicFile::commit() {
  out_.close();
  GL_CHECK(!out_.fail(), "closing '{}' failed: {}", path_.string(), std::strerror(errno));
  std::error_code error;
  fs::rename(temp_path_, path_, error);
  GL_CHECK(!error, "cannot rename '{}' to '{}': {}", temp_path_.string(), path_.string(),
           error.message());
  committed_ = true;
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
