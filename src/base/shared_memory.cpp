// Segment files in the shared-memory directory, mapped shared, with ownership of the name.
#include "graphloom/base/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "graphloom/base/error.h"

namespace graphloom {
namespace {

std::string checked_path(const std::string& name) {
  GL_CHECK(!name.empty() && name.size() < 250 && name.find('/') == std::string::npos,
           "invalid shared-memory segment name '{}' (expected 1-249 characters without '/')", name);
  return shared_memory_directory() + "/" + name;
}

std::string bracketed_setting(const std::string& file) {
  std::ifstream in(file);
  std::string text;
  std::getline(in, text);
  // "always within_size advise [never] deny force": the bracketed word is the setting.
  const auto open = text.find('['), close = text.find(']');
  return open != std::string::npos && close > open ? text.substr(open + 1, close - open - 1) : text;
}

std::byte* map_segment(int fd, std::size_t size, const std::string& name) {
  if (size == 0) return nullptr;
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  GL_CHECK(data != MAP_FAILED, "cannot map shared-memory segment '{}' ({} bytes): {}", name, size,
           std::strerror(errno));
  // Parts are sampled and gathered at random, as the tables of huge_pages.h. A tmpfs honours
  // this where it is mounted with huge=advise; huge=within_size or huge=always need no advice,
  // and /dev/shm is usually mounted without huge= at all (shared_memory_directory()). The
  // kernel's shmem_enabled setting governs only its internal mount, except "force" and "deny".
  ::madvise(data, size, MADV_HUGEPAGE);
  return static_cast<std::byte*>(data);
}

}  // namespace

std::string shared_memory_directory() {
  const char* configured = std::getenv("GRAPHLOOM_SHM_DIR");
  if (configured == nullptr || *configured == '\0') return "/dev/shm";
  std::error_code error;
  GL_CHECK(std::filesystem::is_directory(configured, error),
           "GRAPHLOOM_SHM_DIR (--shm-dir) '{}' is not a directory: shared-memory segments need "
           "an existing tmpfs directory that every process of the machine can reach",
           configured);
  std::string directory = configured;
  while (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  return directory;
}

bool shared_memory_on_huge_pages(const std::string& directory) {
  const std::string setting =
      bracketed_setting("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
  if (setting == "force") return true;
  if (setting == "deny") return false;
  // The mount that holds `directory`: the longest mount point that is a prefix of it.
  std::error_code error;
  const std::string resolved = std::filesystem::weakly_canonical(directory, error).string();
  std::ifstream mounts("/proc/self/mounts");
  std::string device, mount_point, type, options, rest;
  std::size_t best = 0;
  bool huge = false;
  while (mounts >> device >> mount_point >> type >> options && std::getline(mounts, rest)) {
    const bool contains = resolved == mount_point ||
                          resolved.rfind(mount_point == "/" ? "/" : mount_point + "/", 0) == 0;
    if (!contains || mount_point.size() < best) continue;
    best = mount_point.size();
    huge = type == "tmpfs" && (options.find("huge=always") != std::string::npos ||
                               options.find("huge=within_size") != std::string::npos ||
                               options.find("huge=advise") != std::string::npos);
  }
  return huge;
}

std::unique_ptr<SharedMemorySegment> SharedMemorySegment::create(const std::string& name,
                                                                 std::size_t size) {
  const std::string path = checked_path(name);
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  GL_CHECK(fd >= 0, "cannot create shared-memory segment '{}': {}", name, std::strerror(errno));
  // Reserved up front: a tmpfs that fills up later would kill the process that touches the
  // missing page with SIGBUS; here it is an error naming the segment (ENOSPC). ftruncate only
  // where the file system cannot reserve.
  int error = size == 0 ? 0 : ::posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (error == EOPNOTSUPP || error == EINVAL || size == 0) {
    error = ::ftruncate(fd, static_cast<off_t>(size)) == 0 ? 0 : errno;
  }
  if (error != 0) {
    ::close(fd);
    ::unlink(path.c_str());
    GL_THROW("cannot size shared-memory segment '{}' to {} bytes: {} (free space in {}?)", name,
             size, std::strerror(error), shared_memory_directory());
  }
  std::byte* data = nullptr;
  try {
    data = map_segment(fd, size, name);
  } catch (...) {
    ::close(fd);
    ::unlink(path.c_str());
    throw;
  }
  ::close(fd);
  return std::unique_ptr<SharedMemorySegment>(
      new SharedMemorySegment(name, path, data, size, /*owns_name=*/true));
}

std::unique_ptr<SharedMemorySegment> SharedMemorySegment::open(const std::string& name) {
  const std::string path = checked_path(name);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
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
      new SharedMemorySegment(name, path, data, size, /*owns_name=*/false));
}

bool SharedMemorySegment::remove(const std::string& name) {
  return ::unlink(checked_path(name).c_str()) == 0;
}

bool SharedMemorySegment::exists(const std::string& name) {
  return ::access(checked_path(name).c_str(), F_OK) == 0;
}

void SharedMemorySegment::rename(const std::string& from, const std::string& to) {
  GL_CHECK(::rename(checked_path(from).c_str(), checked_path(to).c_str()) == 0,
           "cannot rename shared-memory segment '{}' to '{}': {}", from, to, std::strerror(errno));
}

std::string SharedMemorySegment::path(const std::string& name) { return checked_path(name); }

SharedMemorySegment::~SharedMemorySegment() {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (owns_name_) ::unlink(path_.c_str());
}

}  // namespace graphloom
