// shm_open/mmap wrapper with ownership of the segment name.
#include "graphloom/base/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "graphloom/base/error.h"

namespace graphloom {
namespace {

std::string checked_name(const std::string& name) {
  GL_CHECK(!name.empty() && name.size() < 250 && name.find('/') == std::string::npos,
           "invalid shared-memory segment name '{}' (expected 1-249 characters without '/')", name);
  return "/" + name;
}

std::byte* map_segment(int fd, std::size_t size, const std::string& name) {
  if (size == 0) return nullptr;
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  GL_CHECK(data != MAP_FAILED, "cannot map shared-memory segment '{}' ({} bytes): {}", name, size,
           std::strerror(errno));
  // Parts are sampled and gathered at random, as the tables of huge_pages.h. tmpfs honours
  // this only where /sys/kernel/mm/transparent_hugepage/shmem_enabled is "advise" (Debian's
  // default is "never"); elsewhere it is a no-op.
  ::madvise(data, size, MADV_HUGEPAGE);
  return static_cast<std::byte*>(data);
}

}  // namespace

std::unique_ptr<SharedMemorySegment> SharedMemorySegment::create(const std::string& name,
                                                                 std::size_t size) {
  const std::string path = checked_name(name);
  const int fd = ::shm_open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  GL_CHECK(fd >= 0, "cannot create shared-memory segment '{}': {}", name, std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int saved = errno;
    ::close(fd);
    ::shm_unlink(path.c_str());
    GL_THROW("cannot size shared-memory segment '{}' to {} bytes: {}", name, size,
             std::strerror(saved));
  }
  std::byte* data = nullptr;
  try {
    data = map_segment(fd, size, name);
  } catch (...) {
    ::close(fd);
    ::shm_unlink(path.c_str());
    throw;
  }
  ::close(fd);
  return std::unique_ptr<SharedMemorySegment>(
      new SharedMemorySegment(name, data, size, /*owns_name=*/true));
}

std::unique_ptr<SharedMemorySegment> SharedMemorySegment::open(const std::string& name) {
  const std::string path = checked_name(name);
  const int fd = ::shm_open(path.c_str(), O_RDWR, 0600);
  GL_CHECK(fd >= 0, "cannot open shared-memory segment '{}': {}", name, std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int saved = errno;
    ::close(fd);
    GL_THROW("cannot stat shared-memory segment '{}': {}", name, std::strerror(saved));
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  std::byte* data = nullptr;
  try {
    data = map_segment(fd, size, name);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return std::unique_ptr<SharedMemorySegment>(
      new SharedMemorySegment(name, data, size, /*owns_name=*/false));
}

bool SharedMemorySegment::remove(const std::string& name) {
  return ::shm_unlink(checked_name(name).c_str()) == 0;
}

SharedMemorySegment::~SharedMemorySegment() {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (owns_name_) ::shm_unlink(("/" + name_).c_str());
}

}  // namespace graphloom
