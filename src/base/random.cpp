// Out-of-line parts of RandomStream.
#include "graphloom/base/random.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <random>

namespace graphloom {

double RandomStream::normal() {
  double u1 = uniform_real();
  while (u1 <= 0.0) u1 = uniform_real();
  const double u2 = uniform_real();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::string random_token() {
  std::random_device device;  // /dev/urandom on Linux
  return fmt::format("{:016x}{:016x}", (uint64_t{device()} << 32) | device(),
                     (uint64_t{device()} << 32) | device());
}

}  // namespace graphloom
