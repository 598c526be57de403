// The validators of flag_checks.h. Each parses the value as a number (CLI11 has already
// checked its type) and says what was expected and what was given.
#include "flag_checks.h"

#include <fmt/format.h>

#include <string>

namespace graphloom::cli {
namespace {

CLI::Validator numeric_check(const std::string& description,
                             std::function<std::string(double)> check) {
  return CLI::Validator(
      [check = std::move(check)](std::string& text) -> std::string {
        double value = 0;
        std::size_t used = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          return fmt::format("expected a number, got '{}'", text);
        }
        if (used != text.size()) return fmt::format("expected a number, got '{}'", text);
        return check(value);
      },
      description);
}

}  // namespace

CLI::Validator positive() {
  return numeric_check("POSITIVE", [](double value) -> std::string {
    if (value > 0) return "";
    return fmt::format("must be greater than 0 (got {})", value);
  });
}

CLI::Validator non_negative() {
  return numeric_check("NONNEGATIVE", [](double value) -> std::string {
    if (value >= 0) return "";
    return fmt::format("must be 0 or more (got {})", value);
  });
}

CLI::Validator in_range(double minimum, double maximum) {
  return numeric_check(fmt::format("in [{} - {}]", minimum, maximum),
                       [minimum, maximum](double value) -> std::string {
                         if (value >= minimum && value <= maximum) return "";
                         return fmt::format("must be between {} and {} (got {})", minimum, maximum,
                                            value);
                       });
}

}  // namespace graphloom::cli
