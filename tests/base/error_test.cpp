// GL_CHECK and logging configuration.
#include <gtest/gtest.h>

#include "graphloom/base/error.h"
#include "graphloom/base/logging.h"

namespace graphloom {
namespace {

TEST(Error, CheckFormatsItsMessage) {
  try {
    const int id = 42;
    GL_CHECK(id < 10, "node id {} is outside [0, {})", id, 10);
    FAIL() << "GL_CHECK did not throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "node id 42 is outside [0, 10)");
  }
  EXPECT_NO_THROW(GL_CHECK(true, "never"));
}

TEST(Logging, UnknownLevelIsUsageError) {
  EXPECT_NO_THROW(set_log_level("warn"));
  EXPECT_NO_THROW(set_log_level("off"));
  EXPECT_THROW(set_log_level("loud"), UsageError);
  set_log_level("info");
}

}  // namespace
}  // namespace graphloom
