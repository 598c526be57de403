// zlib-backed line reader and field parsing helpers.
#include "graphloom/io/line_reader.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "graphloom/base/error.h"

namespace graphloom::io {

LineReader::LineReader(std::filesystem::path path) : path_(std::move(path)) {
  file_ = gzopen(path_.c_str(), "rb");
  GL_CHECK(file_ != nullptr, "cannot open '{}': {}", path_.string(), std::strerror(errno));
  gzbuffer(static_cast<gzFile>(file_), 1 << 20);
}

LineReader::~LineReader() { gzclose(static_cast<gzFile>(file_)); }

bool LineReader::next(std::string_view& line) {
  auto* file = static_cast<gzFile>(file_);
  buffer_.clear();
  char chunk[1 << 14];
  while (true) {
    if (gzgets(file, chunk, sizeof(chunk)) == nullptr) {
      int code = Z_OK;
      const char* message = gzerror(file, &code);
      GL_CHECK(code == Z_OK || code == Z_BUF_ERROR, "'{}' line {}: read error: {}", path_.string(),
               line_number_ + 1, message);
      if (buffer_.empty()) return false;
      break;
    }
    buffer_.append(chunk);
    if (!buffer_.empty() && buffer_.back() == '\n') break;
  }
  while (!buffer_.empty() && (buffer_.back() == '\n' || buffer_.back() == '\r')) buffer_.pop_back();
  ++line_number_;
  line = buffer_;
  return true;
}

void LineReader::fail(const std::string& message) const {
  GL_THROW("'{}' line {}: {}", path_.string(), line_number_, message);
}

void split_fields(std::string_view line, char delimiter, std::vector<std::string_view>& fields) {
  fields.clear();
  if (delimiter == ' ') {
    std::size_t pos = 0;
    while (pos < line.size()) {
      while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
      if (pos == line.size()) break;
      std::size_t end = pos;
      while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
      fields.push_back(line.substr(pos, end - pos));
      pos = end;
    }
    return;
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t end = line.find(delimiter, start);
    std::string_view field = line.substr(start, end == std::string_view::npos ? end : end - start);
    while (!field.empty() && (field.front() == ' ' || field.front() == '\t'))
      field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '\t')) field.remove_suffix(1);
    fields.push_back(field);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
}

bool parse_int(std::string_view field, int64_t& value) {
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  return error == std::errc() && end == field.data() + field.size() && !field.empty();
}

bool parse_float(std::string_view field, double& value) {
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  return error == std::errc() && end == field.data() + field.size() && !field.empty();
}

}  // namespace graphloom::io
