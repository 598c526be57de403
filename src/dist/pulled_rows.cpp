// The protobuf wire format of one length-delimited field: tag byte 0x0a, a varint length, the
// bytes (an empty field is not sent at all).
#include "pulled_rows.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "graphloom/base/error.h"

namespace graphloom::dist {
namespace {

constexpr uint8_t kRowsFieldTag = 0x0a;  // field 1, length-delimited

}  // namespace

grpc::ByteBuffer pulled_rows_response(const at::Tensor& rows) {
  const auto bytes = static_cast<uint64_t>(rows.nbytes());
  if (bytes == 0) {  // proto3 leaves an empty field out
    const grpc::Slice empty;
    return grpc::ByteBuffer(&empty, 1);
  }
  uint8_t header[11] = {kRowsFieldTag};
  std::size_t header_size = 1;
  uint64_t length = bytes;
  for (; length > 0x7f; length >>= 7) {
    header[header_size++] = static_cast<uint8_t>((length & 0x7f) | 0x80);
  }
  header[header_size++] = static_cast<uint8_t>(length);
  const grpc::Slice slices[2] = {
      grpc::Slice(header, header_size),
      grpc::Slice(
          rows.data_ptr(), bytes, [](void* kept) { delete static_cast<at::Tensor*>(kept); },
          new at::Tensor(rows))};
  return grpc::ByteBuffer(slices, 2);
}

void deliver_pulled_rows(const grpc::ByteBuffer& response, int64_t row_bytes, int64_t count,
                         int64_t first, const GraphClient::RowSink& sink, const std::string& what) {
  GL_CHECK(row_bytes > 0, "{}: rows of {} bytes", what, row_bytes);
  std::vector<grpc::Slice> slices;
  GL_CHECK(response.Dump(&slices).ok(), "{}: unreadable response", what);
  std::size_t slice = 0;
  std::size_t offset = 0;
  auto next_byte = [&]() -> int {
    while (slice < slices.size() && offset == slices[slice].size()) {
      ++slice;
      offset = 0;
    }
    return slice < slices.size() ? slices[slice].begin()[offset++] : -1;
  };
  uint64_t length = 0;
  if (const int tag = next_byte(); tag != -1) {
    GL_CHECK(tag == kRowsFieldTag, "{}: unexpected field tag {} in the response", what, tag);
    for (int shift = 0;; shift += 7) {
      const int byte = next_byte();
      GL_CHECK(byte != -1 && shift < 64, "{}: truncated response", what);
      length |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
  }
  std::size_t left = 0;
  for (std::size_t s = slice; s < slices.size(); ++s) left += slices[s].size();
  left -= offset;
  GL_CHECK(length == left && static_cast<int64_t>(length) == count * row_bytes,
           "{}: {} bytes (field of {}) for {} rows of {} bytes", what, left, length, count,
           row_bytes);
  std::string partial;
  int64_t row = first;
  for (; slice < slices.size(); ++slice, offset = 0) {
    const auto* data = reinterpret_cast<const char*>(slices[slice].begin()) + offset;
    auto size = static_cast<int64_t>(slices[slice].size() - offset);
    if (!partial.empty()) {
      const int64_t take =
          std::min<int64_t>(size, row_bytes - static_cast<int64_t>(partial.size()));
      partial.append(data, static_cast<std::size_t>(take));
      data += take;
      size -= take;
      if (static_cast<int64_t>(partial.size()) < row_bytes) continue;
      sink(row++, partial.data(), 1);
      partial.clear();
    }
    if (const int64_t whole = size / row_bytes; whole > 0) {
      sink(row, data, whole);
      row += whole;
      data += whole * row_bytes;
      size -= whole * row_bytes;
    }
    partial.assign(data, static_cast<std::size_t>(size));
  }
}

}  // namespace graphloom::dist
