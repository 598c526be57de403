// Write-then-rename outputs: complete or absent, never half-written.
#include <gtest/gtest.h>

#include <fstream>

#include "graphloom/base/atomic_output.h"
#include "graphloom/base/error.h"
#include "support/test_support.h"

namespace graphloom {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::size_t entries_in(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(AtomicFile, AppearsOnlyOnCommit) {
  TempDir dir;
  {
    AtomicFile file(dir / "out.bin");
    file.write("abc", 3);
    EXPECT_FALSE(fs::exists(dir / "out.bin"));
    file.commit();
  }
  EXPECT_EQ(fs::file_size(dir / "out.bin"), 3u);
  EXPECT_EQ(entries_in(dir.path()), 1u);
}

TEST(AtomicFile, AbandonedWriteLeavesNothing) {
  TempDir dir;
  {
    AtomicFile file(dir / "out.bin");
    file.write("abc", 3);
  }
  EXPECT_EQ(entries_in(dir.path()), 0u);
}

TEST(AtomicDirectory, RefusesExistingUnlessOverwrite) {
  TempDir dir;
  fs::create_directories(dir / "ds");
  std::ofstream(dir / "ds" / "old.txt") << "old";
  EXPECT_THROW(AtomicDirectory(dir / "ds", /*overwrite=*/false), UsageError);
  {
    AtomicDirectory out(dir / "ds", /*overwrite=*/true);
    std::ofstream(out.staging() / "new.txt") << "new";
    out.commit();
  }
  EXPECT_TRUE(fs::exists(dir / "ds" / "new.txt"));
  EXPECT_FALSE(fs::exists(dir / "ds" / "old.txt"));
  EXPECT_EQ(entries_in(dir.path()), 1u);  // no leftover temporaries
}

TEST(AtomicDirectory, TrailingSlashNamesTheSameDirectory) {
  TempDir dir;
  for (int round = 0; round < 2; ++round) {  // create, then replace with overwrite
    AtomicDirectory out(dir.path().string() + "/ds/", /*overwrite=*/round == 1);
    std::ofstream(out.staging() / "f.txt") << round;
    out.commit();
  }
  EXPECT_TRUE(fs::exists(dir / "ds" / "f.txt"));
  EXPECT_EQ(entries_in(dir.path()), 1u);
  EXPECT_EQ(entries_in(dir / "ds"), 1u);
}

TEST(AtomicDirectory, FailureBeforeCommitLeavesNoDirectory) {
  TempDir dir;
  try {
    AtomicDirectory out(dir / "ds", false);
    std::ofstream(out.staging() / "part.txt") << "half";
    throw Error("simulated failure");
  } catch (const Error&) {
  }
  EXPECT_EQ(entries_in(dir.path()), 0u);
}

}  // namespace
}  // namespace graphloom
