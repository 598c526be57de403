// Range checks for flags whose messages are in the user's terms: CLI11's own read "Value 0 not
// in range 0.000000 to 1797693134862315708...". CLI11 prefixes the flag's name, so
// `--parts 0` reads "--parts: must be greater than 0 (got 0)".
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "graphloom/base/enum_names.h"
#include "graphloom/base/error.h"

namespace graphloom::cli {

// > 0.
CLI::Validator positive();
// >= 0.
CLI::Validator non_negative();
// minimum <= value <= maximum.
CLI::Validator in_range(double minimum, double maximum);
// A byte size ("256M", "2G", "4096"), replaced by its number of bytes.
CLI::Validator byte_size();

// The flag of an options field: "batch_size" -> "--batch-size", "num_workers" -> "--workers",
// "model.hidden" -> "--hidden".
std::string flag_of_field(const std::string& field);
// An OptionError in flag terms, its field and the fields its detail names in backticks as flags:
// "--prefetch (1) must be at least --workers (2)".
std::string in_flag_terms(const OptionError& error);

// Options added to `cmd` while this lives are listed under `name` in its help.
class HelpGroup {
 public:
  HelpGroup(CLI::App* cmd, const std::string& name)
      : defaults_(cmd->option_defaults()), previous_(defaults_->get_group()) {
    defaults_->group(name);
  }
  ~HelpGroup() { defaults_->group(previous_); }
  HelpGroup(const HelpGroup&) = delete;
  HelpGroup& operator=(const HelpGroup&) = delete;

 private:
  CLI::OptionDefaults* defaults_;
  std::string previous_;
};

// Turns a name of enum E into the number CLI11 stores; otherwise "must be one of full,
// sampled, got 'exact'" (CheckedTransformer's own message listed the numbers too).
template <class E>
CLI::Validator enum_name() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        for (const auto& [name, v] : EnumNames<E>::kNames) {
          if (name == input) {
            input = std::to_string(static_cast<int>(v));
            return "";
          }
        }
        return "must be one of " + enum_choices<E>() + ", got '" + input + "'";
      },
      "{" + enum_choices<E>() + "}");
}

// Adds an option whose values are the names of enum E (EnumNames<E>), e.g. --eval full|sampled.
template <class E>
CLI::Option* add_enum_option(CLI::App* cmd, const std::string& flag, E& value,
                             const std::string& description) {
  return cmd->add_option(flag, value, description)
      ->transform(enum_name<E>())
      ->default_str(std::string(name_of(value)));
}

}  // namespace graphloom::cli
