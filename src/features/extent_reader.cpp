// The two ExtentReaders (extent_reader.h).
#include "extent_reader.h"

#include <fmt/format.h>
#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "graphloom/base/error.h"

namespace graphloom::features {

bool record_read(Extent& extent, int64_t result, const std::string& file) {
  if (result == -EINTR || result == -EAGAIN) return false;
  GL_CHECK(result >= 0, "reading {} bytes at offset {} of {}: {}", extent.length - extent.done,
           extent.offset + extent.done, file, std::strerror(static_cast<int>(-result)));
  if (result == 0) {
    GL_CHECK(extent.done >= extent.needed,
             "{} ends at byte {}, before the {} bytes its header promises (truncated?)", file,
             extent.offset + extent.done, extent.offset + extent.needed);
    return true;
  }
  extent.done += result;
  return extent.done >= extent.length;
}

namespace {

class PreadReader final : public ExtentReader {
 public:
  explicit PreadReader(PreadFunction function) : pread_(function != nullptr ? function : ::pread) {}

  void read(int fd, std::vector<Extent>& extents, const std::string& file) const override {
    std::string failure;
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t i = 0; i < extents.size(); ++i) {
      Extent& e = extents[i];
      try {
        for (bool complete = e.length == 0; !complete;) {
          const ssize_t n = pread_(fd, e.target + e.done, static_cast<size_t>(e.length - e.done),
                                   static_cast<off_t>(e.offset + e.done));
          complete = record_read(e, n >= 0 ? n : -errno, file);
        }
      } catch (const Error& error) {
#pragma omp critical(graphloom_extent_reader)
        if (failure.empty()) failure = error.what();
      }
    }
    GL_CHECK(failure.empty(), "{}", failure);
  }
  const char* name() const override { return "pread"; }

 private:
  PreadFunction pread_;
};

// One ring per thread: loader workers gather concurrently, each on its own submission queue.
struct Ring {
  io_uring ring{};
  int depth = 0;
  int status = -1;
  explicit Ring(int queue_depth) : depth(queue_depth) { open(); }
  ~Ring() { close(); }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  void open() { status = io_uring_queue_init(static_cast<unsigned>(depth), &ring, 0); }
  void close() {
    if (status == 0) io_uring_queue_exit(&ring);
    status = -1;
  }
};

Ring& thread_ring(int depth) {
  thread_local Ring ring(depth);
  return ring;
}

bool transient(int error) { return error == -EINTR || error == -EBUSY || error == -EAGAIN; }

class IoUringReader final : public ExtentReader {
 public:
  explicit IoUringReader(int depth) : depth_(depth) {}

  void read(int fd, std::vector<Extent>& extents, const std::string& file) const override {
    Ring& r = thread_ring(depth_);
    GL_CHECK(r.status == 0, "io_uring setup failed on this thread: {}", std::strerror(-r.status));
    std::size_t next = 0;            // the next extent never prepared
    std::vector<std::size_t> again;  // extents to read on from where they stopped
    int64_t prepared = 0;            // in the submission queue, not yet submitted
    int64_t in_flight = 0;           // submitted, not yet completed
    const auto prepare = [&](std::size_t i) {
      Extent& e = extents[i];
      io_uring_sqe* sqe = io_uring_get_sqe(&r.ring);
      io_uring_prep_read(sqe, fd, e.target + e.done, static_cast<unsigned>(e.length - e.done),
                         static_cast<uint64_t>(e.offset + e.done));
      io_uring_sqe_set_data64(sqe, i);
      ++prepared;
    };
    // After a failure nothing more is submitted, but every submitted read is reaped before the
    // error leaves: the kernel writes into the caller's buffers until then.
    std::string failure;
    for (;;) {
      while (failure.empty() && prepared + in_flight < depth_ &&
             (!again.empty() || next < extents.size())) {
        if (!again.empty()) {
          prepare(again.back());
          again.pop_back();
        } else if (extents[next].length == 0) {
          ++next;
        } else {
          prepare(next++);
        }
      }
      if (failure.empty() && prepared > 0) {
        const int submitted = io_uring_submit_and_wait(&r.ring, 1);
        if (submitted >= 0) {
          prepared -= submitted;
          in_flight += submitted;
        } else if (!transient(submitted)) {
          failure = fmt::format("io_uring submit on {}: {}", file, std::strerror(-submitted));
        }
      }
      if (in_flight == 0) {
        const bool unread = prepared > 0 || !again.empty() || next < extents.size();
        if (failure.empty() && unread) continue;  // a transient refusal: submit again
        break;
      }
      io_uring_cqe* cqe = nullptr;
      const int waited = io_uring_wait_cqe(&r.ring, &cqe);
      if (waited < 0 && !transient(waited) && failure.empty()) {
        failure = fmt::format("io_uring wait on {}: {}", file, std::strerror(-waited));
      }
      unsigned head = 0, seen = 0;
      io_uring_for_each_cqe(&r.ring, head, cqe) {
        const auto i = static_cast<std::size_t>(io_uring_cqe_get_data64(cqe));
        --in_flight;
        ++seen;
        try {
          if (!record_read(extents[i], cqe->res, file)) again.push_back(i);
        } catch (const Error& error) {
          if (failure.empty()) failure = error.what();
        }
      }
      io_uring_cq_advance(&r.ring, seen);
      if (waited < 0 && !transient(waited) && seen == 0) break;  // nothing more will arrive
    }
    // Reads never submitted must not reach the next gather; reads still in flight (the wait
    // itself failed) must not complete into its ring.
    if (prepared > 0 || in_flight > 0) {
      r.close();
      r.open();
    }
    GL_CHECK(failure.empty(), "{}", failure);
  }
  const char* name() const override { return "io_uring"; }

 private:
  int depth_;
};

}  // namespace

std::unique_ptr<ExtentReader> make_pread_reader(PreadFunction pread_function) {
  return std::make_unique<PreadReader>(pread_function);
}

std::unique_ptr<ExtentReader> make_io_uring_reader(int queue_depth, std::string& why) {
  io_uring probe{};
  const int status = io_uring_queue_init(static_cast<unsigned>(queue_depth), &probe, 0);
  if (status != 0) {
    why = std::strerror(-status);
    return nullptr;
  }
  io_uring_queue_exit(&probe);
  return std::make_unique<IoUringReader>(queue_depth);
}

}  // namespace graphloom::features
