// Logging setup: one stderr sink so stdout stays clean for results.
#include "graphloom/base/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "graphloom/base/error.h"

namespace graphloom {

namespace {

void install_logger() {
  static const bool installed = [] {
    auto logger = spdlog::stderr_color_mt("graphloom");
    logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    spdlog::set_default_logger(logger);
    return true;
  }();
  (void)installed;
}

}  // namespace

void set_log_tag(const std::string& tag) {
  install_logger();
  spdlog::set_pattern(fmt::format("[%H:%M:%S.%e] [{}] [%^%l%$] %v", tag));
}

void set_log_level(const std::string& level) {
  install_logger();
  const auto parsed = spdlog::level::from_str(level);
  // from_str maps unknown names to "off"; only accept "off" when it was asked for.
  if (parsed == spdlog::level::off && level != "off") {
    throw OptionError("log_level",
                      fmt::format("must be one of trace, debug, info, warn, error, critical, off, "
                                  "got '{}'",
                                  level));
  }
  spdlog::set_level(parsed);
}

}  // namespace graphloom
