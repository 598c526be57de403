// DiskFeatureSource and its extent readers: the rows a gather returns equal the table's, through
// io_uring and pread, with O_DIRECT or the page cache, for rows of any size and a file whose
// last row ends off a block boundary; reads cut short or interrupted are finished; a file
// shorter than its header says is an error naming it, when opened and when read.
#include "graphloom/features/disk_feature_source.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "extent_reader.h"  // internal to the features module
#include "graphloom/base/error.h"
#include "graphloom/base/npy.h"
#include "support/test_support.h"

namespace graphloom::features {
namespace {

namespace fs = std::filesystem;

// Rows of 37 floats (148 bytes: rows straddle blocks) and int64 labels; 3001 rows, so the data
// ends off a 4096-byte boundary. Written under the build tree when it is writable (a disk,
// where O_DIRECT holds), else the temporary directory.
struct Tables {
  testing::TempDir dir;
  at::Tensor feat = at::randn({3001, 37});
  at::Tensor label = at::randint(1000, {3001}, at::kLong);
  std::map<std::string, fs::path> files() const {
    return {{"feat", dir / "feat.npy"}, {"label", dir / "label.npy"}};
  }
  Tables() {
    save_npy(dir / "feat.npy", feat);
    save_npy(dir / "label.npy", label);
  }
};

at::Tensor mixed_ids(int64_t rows) {
  // Random rows, duplicates, neighbors (one extent), the first and the last row.
  return at::cat({at::randint(rows, {500}, at::kLong), at::arange(100, 140, at::kLong),
                  at::tensor({int64_t{0}, rows - 1, rows - 1, int64_t{7}, int64_t{7}})});
}

TEST(DiskFeatureSource, GathersTheTablesRowsThroughEveryReaderAndMode) {
  const Tables tables;
  const at::Tensor ids = mixed_ids(3001);
  std::string why;
  const bool have_io_uring = make_io_uring_reader(8, why) != nullptr;
  for (const bool io_uring : {true, false}) {
    for (const bool direct : {true, false}) {
      const DiskFeatureSource source(tables.files(), {.direct_io = direct, .io_uring = io_uring});
      SCOPED_TRACE(fmt::format("reader {}, direct {}", source.reader(), direct));
      EXPECT_STREQ(source.reader(), io_uring && have_io_uring ? "io_uring" : "pread");
      EXPECT_EQ(source.info("feat").num_rows, 3001);
      EXPECT_EQ(source.info("feat").row_shape, std::vector<int64_t>{37});
      EXPECT_TRUE(source.info("label").row_shape.empty());
      EXPECT_TRUE(at::equal(source.gather("feat", ids), tables.feat.index_select(0, ids)));
      EXPECT_TRUE(at::equal(source.gather("label", ids), tables.label.index_select(0, ids)));
      EXPECT_EQ(source.gather("feat", at::empty({0}, at::kLong)).size(0), 0);
      const int64_t distinct = std::get<0>(at::_unique(ids)).numel();
      EXPECT_GE(source.bytes_read(), distinct * (148 + 8));
    }
  }
}

// Each gather reads into a buffer an earlier, larger or smaller, gather left its bytes in.
TEST(DiskFeatureSource, GathersOfEverySizeInTurnReturnExactRows) {
  const Tables tables;
  const DiskFeatureSource source(tables.files());
  for (const int64_t n : {2000, 3, 600, 2900, 1, 1500}) {
    const at::Tensor ids = at::randint(3001, {n}, at::kLong);
    EXPECT_TRUE(at::equal(source.gather("feat", ids), tables.feat.index_select(0, ids))) << n;
  }
  // The last row ends off a block boundary: a short read at the end of the file, into a
  // buffer that held other rows.
  for (const at::Tensor& ids :
       {at::tensor({int64_t{3000}}), at::tensor({int64_t{0}, int64_t{3000}})}) {
    EXPECT_TRUE(at::equal(source.gather("feat", ids), tables.feat.index_select(0, ids)));
  }
}

// Loader workers gather at once: each thread reads on its own ring.
TEST(DiskFeatureSource, ConcurrentGathersReturnExactRows) {
  const Tables tables;
  const DiskFeatureSource source(tables.files());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        const at::Tensor ids = at::randint(3001, {300}, at::kLong);
        if (!at::equal(source.gather("feat", ids), tables.feat.index_select(0, ids))) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(DiskFeatureSource, RefusesATruncatedFileOutOfRangeRowsAndUnknownNames) {
  const Tables tables;
  {
    const DiskFeatureSource source(tables.files());
    EXPECT_THROW(source.gather("feat", at::tensor({int64_t{3001}})), RangeError);
    EXPECT_THROW(source.gather("feat", at::tensor({int64_t{-1}})), RangeError);
    EXPECT_THROW(source.info("embedding"), Error);
    // Cut short after it was opened: the read of the last rows names the file.
    ASSERT_EQ(::truncate((tables.dir / "feat.npy").c_str(), 128 + 2000 * 148), 0);
    try {
      source.gather("feat", at::tensor({int64_t{2999}, int64_t{3000}}));
      ADD_FAILURE() << "a read past the end of the file was accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("feat.npy"), std::string::npos) << error.what();
    }
  }
  try {
    const DiskFeatureSource reopened(tables.files());
    ADD_FAILURE() << "a truncated file was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("feat.npy"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("truncated"), std::string::npos) << error.what();
  }
}

// A pread that returns at most 100 bytes and fails with EINTR every third call.
std::atomic<int> flaky_calls{0};
ssize_t flaky_pread(int fd, void* buffer, size_t count, off_t offset) {
  if (++flaky_calls % 3 == 0) {
    errno = EINTR;
    return -1;
  }
  return ::pread(fd, buffer, std::min<size_t>(count, 100), offset);
}

// Extents of every shape over a file of known bytes, through `reader`.
void expect_extents_read(const ExtentReader& reader) {
  testing::TempDir dir;
  const fs::path path = dir / "bytes";
  std::vector<std::byte> bytes(10000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 7 % 251);
  {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), file);
    std::fclose(file);
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::vector<std::byte> buffer(20000);
  // A middle range, a one-byte range, a range that runs past the end (its needed bytes end at
  // the end) and an empty one.
  std::vector<Extent> extents{{.offset = 5, .length = 3000, .needed = 3000},
                              {.offset = 9999, .length = 1, .needed = 1},
                              {.offset = 8000, .length = 4096, .needed = 2000},
                              {.offset = 0, .length = 0, .needed = 0}};
  int64_t at_byte = 0;
  for (Extent& e : extents) {
    e.target = buffer.data() + at_byte;
    at_byte += e.length;
  }
  reader.read(fd, extents, path.string());
  for (const Extent& e : extents) {
    EXPECT_GE(e.done, e.needed);
    EXPECT_EQ(std::memcmp(e.target, bytes.data() + e.offset, static_cast<std::size_t>(e.needed)), 0)
        << "extent at " << e.offset;
  }
  // Past the end with bytes still needed: an error naming the file.
  std::vector<Extent> beyond{{.offset = 9000, .length = 4096, .needed = 1500}};
  beyond[0].target = buffer.data();
  EXPECT_THROW(reader.read(fd, beyond, path.string()), Error);
  ::close(fd);
}

TEST(ExtentReader, PreadFinishesShortAndInterruptedReads) {
  flaky_calls = 0;
  expect_extents_read(*make_pread_reader(flaky_pread));
  EXPECT_GT(flaky_calls.load(), 60);  // it did read in pieces
}

TEST(ExtentReader, IoUringReadsEveryExtent) {
  std::string why;
  const auto reader = make_io_uring_reader(8, why);
  if (reader == nullptr) GTEST_SKIP() << "SKIPPED: io_uring is unavailable here: " << why;
  expect_extents_read(*reader);
}

TEST(ExtentReader, ReadResultsAreAccountedForByKind) {
  Extent e{.offset = 0, .length = 100, .needed = 60};
  EXPECT_FALSE(record_read(e, -EINTR, "f"));
  EXPECT_FALSE(record_read(e, -EAGAIN, "f"));
  EXPECT_EQ(e.done, 0);
  EXPECT_FALSE(record_read(e, 40, "f"));        // short: read on
  EXPECT_THROW(record_read(e, 0, "f"), Error);  // EOF before the needed 60
  EXPECT_FALSE(record_read(e, 30, "f"));
  EXPECT_TRUE(record_read(e, 0, "f"));  // EOF after them: complete
  EXPECT_THROW(record_read(e, -EIO, "f"), Error);
}

}  // namespace
}  // namespace graphloom::features
