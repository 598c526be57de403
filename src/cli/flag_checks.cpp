// The validators of flag_checks.h. Each parses the value as a number (CLI11 has already
// checked its type) and says what was expected and what was given.
#include "flag_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
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

namespace {

// Fields whose flag is not their name with dashes, and fields that details mention.
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
      {"prefetch", "--prefetch"},
      {"batch_size", "--batch-size"},
      {"epochs", "--epochs"},
      {"data", "--data"},
      {"part_config", "--part-config"},
      {"ip_config", "--ip-config"},
      {"cache_size", "--cache-size"},
      {"checkpoint", "--checkpoint"},
      {"edge_type_fanouts", "--edge-type-fanout"},
      {"token", "--token-file"},
      {"insecure", "--insecure"},
      {"tls_cert", "--tls-cert"},
      {"tls_key", "--tls-key"},
      {"tls_ca", "--tls-ca"},
  };
  return flags;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

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
  std::string detail = error.detail();
  for (const auto& [field, flag] : renamed_fields()) {
    std::size_t at = 0;
    while ((at = detail.find(field, at)) != std::string::npos) {
      const std::size_t end = at + field.size();
      const bool whole = (at == 0 || !word_char(detail[at - 1])) &&
                         (end == detail.size() || !word_char(detail[end]));
      if (!whole) {
        at = end;
        continue;
      }
      detail.replace(at, field.size(), flag);
      at += flag.size();
    }
  }
  return flag_of_field(error.field()) + " " + detail;
}

}  // namespace graphloom::cli
