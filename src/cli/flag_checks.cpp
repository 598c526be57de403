// The validators of flag_checks.h. Each parses the value as a number (CLI11 has already
// checked its type) and says what was expected and what was given.
#include "flag_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <string>

#include "graphloom/features/cached_feature_source.h"

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

CLI::Validator byte_size() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          text = std::to_string(features::parse_byte_size(text));
          return "";
        } catch (const Error& e) {
          return e.what();
        }
      },
      "SIZE");
}

namespace {

// Fields whose flag is not their name with dashes.
const std::map<std::string, std::string>& renamed_fields() {
  static const std::map<std::string, std::string> flags{
      {"num_workers", "--workers"},
      {"source_format", "--from"},
      {"source", "SOURCE"},
      {"check_sync_every", "--check-sync"},
      {"recency_half_life_days", "--recency-half-life"},
      {"destination_bias", "--bias"},
      {"model.kind", "--model"},
      {"embed_optimizer.kind", "--embed-optimizer"},
      {"edge_type_fanouts", "--edge-type-fanout"},
      {"token", "--token-file"},
      {"device_cache_bytes", "--device-cache-size"},
  };
  return flags;
}

}  // namespace

std::string flag_of_field(const std::string& field) {
  if (const auto found = renamed_fields().find(field); found != renamed_fields().end()) {
    return found->second;
  }
  std::string name = field.substr(field.rfind('.') + 1);  // npos + 1 == 0
  std::replace(name.begin(), name.end(), '_', '-');
  return "--" + name;
}

std::string in_flag_terms(const OptionError& error) {
  // A detail names the other fields it mentions in backticks; other quoted text, such as
  // `graphloom launch`, is not a field name and stays as it is.
  static const std::regex kField("`([a-z][a-z0-9_.]*)`");
  const std::string& detail = error.detail();
  std::string text = flag_of_field(error.field()) + " ";
  auto copied = detail.cbegin();
  for (std::sregex_iterator match(detail.begin(), detail.end(), kField), end; match != end;
       ++match) {
    text.append(copied, (*match)[0].first);
    text += flag_of_field((*match)[1].str());
    copied = (*match)[0].second;
  }
  return text.append(copied, detail.cend());
}

}  // namespace graphloom::cli
