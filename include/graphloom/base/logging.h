// Logging setup: spdlog to stderr, level chosen by `--log-level`.
#pragma once

#include <string>

namespace graphloom {

// Sets the global log level: trace, debug, info, warn, error, critical or off.
// Throws graphloom::UsageError on an unknown level name.
void set_log_level(const std::string& level);

}  // namespace graphloom
