// mmap(2) wrapper; an empty file maps to a null pointer with size 0.
#include "graphloom/base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "graphloom/base/error.h"

namespace graphloom {

std::shared_ptr<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  GL_CHECK(fd >= 0, "cannot open '{}': {}", path.string(), std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int saved = errno;
    ::close(fd);
    GL_THROW("cannot stat '{}': {}", path.string(), std::strerror(saved));
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int saved = errno;
      ::close(fd);
      GL_THROW("cannot memory-map '{}' ({} bytes): {}", path.string(), size, std::strerror(saved));
    }
  }
  ::close(fd);  // the mapping keeps the file alive
  return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<std::byte*>(data), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

void advise_random_access(const void* data, std::size_t bytes) {
  if (data == nullptr || bytes == 0) return;
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
  const auto end = reinterpret_cast<uintptr_t>(data) + bytes;
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_RANDOM);
}

}  // namespace graphloom
