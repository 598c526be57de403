// Logging setup: spdlog to stderr, level chosen by `--log-level`.
#pragma once

#include <string>

namespace graphloom {

// Sets the global log level: trace, debug, info, warn, error, critical or off.
// Throws graphloom::UsageError on an unknown level name.
void set_log_level(const std::string& level);

// Prefixes every log line with `tag` (e.g. "rank 1") so the lines of a job's processes,
// interleaved on one terminal, can be told apart.
void set_log_tag(const std::string& tag);

}  // namespace graphloom
