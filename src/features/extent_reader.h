// Reading byte ranges ("extents") of a file into memory, many at a time (internal to the
// features module): through io_uring (liburing) with a deep queue, or pread on the calling
// thread's OpenMP team where io_uring is unavailable (an old kernel, a seccomp filter). Both
// finish short reads and retry interrupted ones; reading past the end of the file is an error
// unless the bytes an extent needs were read (an O_DIRECT read rounded up past the end).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace graphloom::features {

struct Extent {
  int64_t offset = 0;  // in the file
  int64_t length = 0;  // bytes asked for (a multiple of the block size under O_DIRECT)
  int64_t needed = 0;  // bytes that must arrive (<= length): short of them, EOF is an error
  std::byte* target = nullptr;
  int64_t done = 0;  // bytes read so far
};

// Accounts for one read's result on its extent: true when the extent is complete. Throws
// graphloom::Error for an I/O error or an end of file before `needed` bytes; -EINTR and
// -EAGAIN leave it to be read again. `result` is a byte count or a negated errno.
bool record_read(Extent& extent, int64_t result, const std::string& file);

class ExtentReader {
 public:
  virtual ~ExtentReader() = default;
  // Reads every extent of `fd` (named `file` in errors) completely.
  virtual void read(int fd, std::vector<Extent>& extents, const std::string& file) const = 0;
  virtual const char* name() const = 0;
};

using PreadFunction = ssize_t (*)(int, void*, size_t, off_t);

// pread on the calling thread's OpenMP team, one extent per task; `pread_function` is
// replaced in tests (short reads, EINTR).
std::unique_ptr<ExtentReader> make_pread_reader(PreadFunction pread_function = nullptr);
// io_uring with `queue_depth` reads in flight per thread; null when io_uring cannot be set up
// here, with the reason in `why`.
std::unique_ptr<ExtentReader> make_io_uring_reader(int queue_depth, std::string& why);

}  // namespace graphloom::features
