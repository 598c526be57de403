// Out-of-line failure path of GL_CHECK, so the check itself inlines to one branch.
#include "graphloom/base/error.h"

#include <spdlog/spdlog.h>

namespace graphloom::detail {

void throw_check_failure(const char* condition, const char* file, int line,
                         const std::string& message) {
  // The user sees only the message; the source location goes to the debug log.
  spdlog::debug("check failed: {} at {}:{}", condition, file, line);
  throw Error(message);
}

}  // namespace graphloom::detail
