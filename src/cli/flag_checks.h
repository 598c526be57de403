// Range checks for flags whose messages are in the user's terms: CLI11's own read "Value 0 not
// in range 0.000000 to 1797693134862315708...". CLI11 prefixes the flag's name, so
// `--parts 0` reads "--parts: must be greater than 0 (got 0)".
#pragma once

#include <CLI/CLI.hpp>

namespace graphloom::cli {

// > 0.
CLI::Validator positive();
// >= 0.
CLI::Validator non_negative();
// minimum <= value <= maximum.
CLI::Validator in_range(double minimum, double maximum);

}  // namespace graphloom::cli
