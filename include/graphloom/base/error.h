// graphloom::Error and GL_CHECK: every failure is an exception that carries its context
// (file, flag, id, what was expected) and is caught once, at the CLI or RPC boundary.
#pragma once

#include <c10/util/ArrayRef.h>
#include <fmt/format.h>

#include <stdexcept>
#include <string>

// One fmt in every translation unit: the one spdlog is built on (Debian's), never the copy in
// libtorch's include folder (cmake/TorchFromPython.cmake puts Debian's first).
static_assert(FMT_VERSION == GRAPHLOOM_FMT_VERSION,
              "this translation unit sees another fmt than the one spdlog is built on");

namespace graphloom {

// The one exception type of the library. `what()` is a complete sentence meant for the user.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A bad command line (unknown value, contradictory flags): the CLI exits with code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A bad value of one field of an options struct, e.g. field "batch_size", detail "must be >= 1,
// got 0". The library names fields, not flags: the CLI says `--batch-size must be ...`, the
// Python package `batch_size must be ...`. A detail names any other field in backticks
// ("must be at least `num_workers`"), which the CLI turns into its flag. what() reads
// "<field> <detail>".
class OptionError : public UsageError {
 public:
  OptionError(std::string field, std::string detail)
      : UsageError(field + " " + detail), field_(std::move(field)), detail_(std::move(detail)) {}
  const std::string& field() const { return field_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string field_;
  std::string detail_;
};

// A request larger than a configured limit (a sampling call's picks, a server's per-request
// memory budget): OptionError's field names the limit, the detail says the value that passed
// it. Graph servers answer it with RESOURCE_EXHAUSTED; Python raises it as OptionError.
class LimitError : public OptionError {
 public:
  using OptionError::OptionError;
};

// A file or directory that does not exist (Python: FileNotFoundError).
class NotFoundError : public Error {
 public:
  using Error::Error;
};

// An id, index or position outside its range (Python: IndexError).
class RangeError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throw_check_failure(const char* condition, const char* file, int line,
                                      const std::string& message);
}  // namespace detail

}  // namespace graphloom

// GL_CHECK(cond, "format {}", args...): throws graphloom::Error with the formatted message when
// `cond` is false. The message must name what was wrong and what was expected.
#define GL_CHECK(cond, ...)                                                 \
  do {                                                                      \
    if (!(cond)) [[unlikely]] {                                             \
      ::graphloom::detail::throw_check_failure(#cond, __FILE__, __LINE__,   \
                                               ::fmt::format(__VA_ARGS__)); \
    }                                                                       \
  } while (0)

// GL_CHECK_AS(RangeError, cond, ...): GL_CHECK throwing one of the Error subclasses above, for
// the failures a caller tells apart (the Python package maps them to IndexError and
// FileNotFoundError).
#define GL_CHECK_AS(ErrorType, cond, ...)                       \
  do {                                                          \
    if (!(cond)) [[unlikely]] {                                 \
      throw ::graphloom::ErrorType(::fmt::format(__VA_ARGS__)); \
    }                                                           \
  } while (0)

// Tensor shapes print as "[2708, 1433]" in messages.
template <>
struct fmt::formatter<c10::IntArrayRef> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(c10::IntArrayRef shape, Context& ctx) const {
    return fmt::format_to(ctx.out(), "[{}]", fmt::join(shape, ", "));
  }
};

// GL_THROW("format {}", args...): unconditional failure with the same formatting.
#define GL_THROW(...) throw ::graphloom::Error(::fmt::format(__VA_ARGS__))
