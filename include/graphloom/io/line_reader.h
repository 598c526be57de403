// Line-by-line reading of text files, plain or gzip-compressed (zlib detects which), with the
// line number kept for error messages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace graphloom::io {

class LineReader {
 public:
  explicit LineReader(std::filesystem::path path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Reads the next line without its line ending; false at end of file.
  bool next(std::string_view& line);
  int64_t line_number() const { return line_number_; }
  const std::filesystem::path& path() const { return path_; }

  // Throws graphloom::Error: "'<file>' line <n>: <message>".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  std::filesystem::path path_;
  void* file_;  // gzFile
  std::string buffer_;
  int64_t line_number_ = 0;
};

// Splits `line` on `delimiter` (' ' means any run of spaces and tabs) into `fields`.
void split_fields(std::string_view line, char delimiter, std::vector<std::string_view>& fields);

// Parses a whole field as a number; false when it is not one.
bool parse_int(std::string_view field, int64_t& value);
bool parse_float(std::string_view field, double& value);

}  // namespace graphloom::io
