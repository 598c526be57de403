// DiskFeatureSource (disk_feature_source.h): a gather sorts its rows, merges the rows whose
// (block-aligned, under O_DIRECT) byte ranges touch into extents, reads every extent into one
// aligned buffer at once, and copies each row to its places in the output.
#include "graphloom/features/disk_feature_source.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <omp.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "extent_reader.h"
#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"
#include "read_buffers.h"

namespace graphloom::features {
namespace {

constexpr int64_t kBlock = 4096;              // O_DIRECT alignment of offsets, sizes and buffers
constexpr int64_t kMaxExtentBytes = 1 << 22;  // longer runs of rows split: reads in parallel

// Read buffers kept between gathers: one per loader worker (or concurrent server request)
// allocates nothing in steady state.
constexpr std::size_t kKeptBuffers = 4;

}  // namespace

struct DiskFeatureSource::Table {
  std::filesystem::path path;
  int fd = -1;
  bool direct = false;
  FeatureInfo info{};
  int64_t row_bytes = 0;
  int64_t data_offset = 0;

  ~Table() {
    if (fd >= 0) ::close(fd);
  }
};

DiskFeatureSource::DiskFeatureSource(const std::map<std::string, std::filesystem::path>& files,
                                     DiskFeatureOptions options) {
  for (const auto& [name, path] : files) {
    auto table = std::make_unique<Table>();
    table->path = path;
    const NpyHeader header = read_npy_header(path);
    GL_CHECK(!header.shape.empty(), "{}: a feature table needs rows, got a scalar", path.string());
    table->info = {header.dtype, {header.shape.begin() + 1, header.shape.end()}, header.shape[0]};
    table->row_bytes = static_cast<int64_t>(c10::elementSize(header.dtype));
    for (const int64_t size : table->info.row_shape) table->row_bytes *= size;
    table->data_offset = static_cast<int64_t>(header.data_offset);
    const int flags = O_RDONLY | O_CLOEXEC;
    table->fd = options.direct_io ? ::open(path.c_str(), flags | O_DIRECT) : -1;
    table->direct = table->fd >= 0;
    if (!table->direct) table->fd = ::open(path.c_str(), flags);  // e.g. tmpfs: EINVAL
    GL_CHECK(table->fd >= 0, "cannot open {}: {}", path.string(), std::strerror(errno));
    struct stat status {};
    GL_CHECK(::fstat(table->fd, &status) == 0, "cannot stat {}: {}", path.string(),
             std::strerror(errno));
    const int64_t expected = table->data_offset + table->info.num_rows * table->row_bytes;
    GL_CHECK(status.st_size >= expected,
             "{} is {} bytes, shorter than the {} its header promises ({} rows of {} bytes after "
             "a {}-byte header): truncated?",
             path.string(), static_cast<int64_t>(status.st_size), expected, table->info.num_rows,
             table->row_bytes, table->data_offset);
    tables_.emplace(name, std::move(table));
  }
  buffers_ = std::make_unique<ReadBuffers>(kBlock, kKeptBuffers);
  std::string why;
  if (options.io_uring) reader_ = make_io_uring_reader(options.queue_depth, why);
  if (reader_ == nullptr) {
    if (options.io_uring) {
      spdlog::warn(
          "io_uring is unavailable here ({}): feature rows are read with pread on {} "
          "threads",
          why, omp_get_max_threads());
    }
    reader_ = make_pread_reader();
  }
}

DiskFeatureSource::~DiskFeatureSource() = default;

const char* DiskFeatureSource::reader() const { return reader_->name(); }

const DiskFeatureSource::Table& DiskFeatureSource::table(const std::string& name) const {
  const auto found = tables_.find(name);
  GL_CHECK(found != tables_.end(), "no node feature named '{}' on disk", name);
  return *found->second;
}

FeatureInfo DiskFeatureSource::info(const std::string& name) const { return table(name).info; }

void DiskFeatureSource::gather(const std::string& name, const at::Tensor& ids,
                               at::Tensor& out) const {
  const Table& t = table(name);
  GL_CHECK(ids.scalar_type() == at::kLong && ids.dim() == 1,
           "gather '{}': ids must be a 1-D int64 tensor", name);
  GL_CHECK(out.defined() && out.is_contiguous() && out.scalar_type() == t.info.dtype &&
               out.numel() * static_cast<int64_t>(out.element_size()) == ids.numel() * t.row_bytes,
           "gather '{}': output must be a contiguous tensor of {} rows of {} bytes", name,
           ids.numel(), t.row_bytes);
  const int64_t n = ids.numel();
  if (n == 0) return;
  const at::Tensor all = ids.contiguous();
  const int64_t low = all.min().item<int64_t>(), high = all.max().item<int64_t>();
  GL_CHECK_AS(RangeError, low >= 0 && high < t.info.num_rows,
              "gather '{}': row {} is outside [0, {}) of {}", name, low < 0 ? low : high,
              t.info.num_rows, t.path.string());
  const at::Tensor order = at::argsort(all);
  const at::Tensor sorted = all.index_select(0, order);
  const int64_t* row = sorted.data_ptr<int64_t>();
  const int64_t* place = order.data_ptr<int64_t>();

  // Extents over the distinct rows in file order; extent_of[k]: the extent of sorted row k.
  const int64_t align = t.direct ? kBlock : 1;
  std::vector<Extent> extents;
  std::vector<int32_t> extent_of(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    if (k > 0 && row[k] == row[k - 1]) {
      extent_of[k] = extent_of[k - 1];
      continue;
    }
    const int64_t begin = t.data_offset + row[k] * t.row_bytes;
    const int64_t end = begin + t.row_bytes;
    const int64_t aligned_begin = begin / align * align;
    const int64_t aligned_end = (end + align - 1) / align * align;
    if (extents.empty() || aligned_begin > extents.back().offset + extents.back().length ||
        aligned_end - extents.back().offset > kMaxExtentBytes) {
      extents.push_back({.offset = aligned_begin, .length = 0});
    }
    Extent& e = extents.back();
    e.length = std::max(e.length, aligned_end - e.offset);
    e.needed = end - e.offset;
    extent_of[k] = static_cast<int32_t>(extents.size() - 1);
  }
  int64_t buffer_bytes = 0;
  for (const Extent& e : extents) buffer_bytes += e.length;
  ReadBuffers::Lease buffer = buffers_->take(buffer_bytes);
  int64_t at_byte = 0;
  for (Extent& e : extents) {
    e.target = buffer.data() + at_byte;
    at_byte += e.length;
  }
  try {
    reader_->read(t.fd, extents, t.path.string());
  } catch (...) {
    buffer.discard();  // a failed ring may still write into it: never lend it again
    throw;
  }
  int64_t read = 0;
  for (const Extent& e : extents) read += e.done;
  bytes_read_ += read;

  auto* target = static_cast<std::byte*>(out.data_ptr());
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < n; ++k) {
    const Extent& e = extents[extent_of[k]];
    const int64_t begin = t.data_offset + row[k] * t.row_bytes;
    std::memcpy(target + place[k] * t.row_bytes, e.target + (begin - e.offset),
                static_cast<std::size_t>(t.row_bytes));
  }
}

}  // namespace graphloom::features
