// The protobuf wire format of length-delimited fields: a tag byte (field number << 3 | 2), a
// varint length, the bytes. Field numbers here stay below 16, so a tag is one byte.
#include "raw_message.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

#include "graphloom/base/error.h"

namespace graphloom::distributed {
namespace {

constexpr int kLengthDelimited = 2;

// Reads bytes across the slices of a message.
class SliceReader {
 public:
  explicit SliceReader(std::vector<grpc::Slice> slices) : slices_(std::move(slices)) {
    for (const grpc::Slice& slice : slices_) left_ += slice.size();
  }

  uint64_t left() const { return left_; }

  int next_byte() {
    skip_empty();
    if (slice_ == slices_.size()) return -1;
    --left_;
    return slices_[slice_].begin()[offset_++];
  }

  // Hands the next `size` bytes (at most left()) to `sink`, one piece per slice.
  void read(uint64_t size, const PieceSink& sink) {
    while (size > 0) {
      skip_empty();
      const std::size_t take = std::min<uint64_t>(size, slices_[slice_].size() - offset_);
      sink(reinterpret_cast<const char*>(slices_[slice_].begin()) + offset_, take);
      offset_ += take;
      left_ -= take;
      size -= take;
    }
  }

 private:
  void skip_empty() {
    while (slice_ < slices_.size() && offset_ == slices_[slice_].size()) {
      ++slice_;
      offset_ = 0;
    }
  }

  std::vector<grpc::Slice> slices_;
  std::size_t slice_ = 0;
  std::size_t offset_ = 0;
  uint64_t left_ = 0;
};

// Tag and length of one field, varints.
grpc::Slice field_header(int number, uint64_t length) {
  uint8_t header[12] = {static_cast<uint8_t>(number << 3 | kLengthDelimited)};
  std::size_t size = 1;
  for (; length > 0x7f; length >>= 7) header[size++] = static_cast<uint8_t>((length & 0x7f) | 0x80);
  header[size++] = static_cast<uint8_t>(length);
  return grpc::Slice(header, size);
}

}  // namespace

grpc::ByteBuffer raw_message(const std::vector<std::pair<int, at::Tensor>>& fields) {
  std::vector<grpc::Slice> slices;
  slices.reserve(2 * fields.size() + 1);  // no reallocation between `new` and its slice
  for (const auto& [number, tensor] : fields) {
    if (!tensor.defined()) continue;
    GL_CHECK(number > 0 && number < 16, "raw message field {}: numbers 1-15 only", number);
    const auto bytes = static_cast<uint64_t>(tensor.nbytes());
    slices.push_back(field_header(number, bytes));
    if (bytes == 0) continue;
    auto* kept = new at::Tensor(tensor.contiguous());
    slices.emplace_back(
        kept->data_ptr(), bytes, [](void* tensor) { delete static_cast<at::Tensor*>(tensor); },
        kept);
  }
  if (slices.empty()) slices.emplace_back();  // an empty message
  return grpc::ByteBuffer(slices.data(), slices.size());
}

void read_raw_message(const grpc::ByteBuffer& message, const FieldOpener& open,
                      const std::string& what) {
  std::vector<grpc::Slice> slices;
  GL_CHECK(message.Dump(&slices).ok(), "{}: unreadable response", what);
  SliceReader reader(std::move(slices));
  for (int tag; (tag = reader.next_byte()) != -1;) {
    GL_CHECK((tag & 7) == kLengthDelimited && tag < 0x80 && (tag >> 3) >= 1,
             "{}: unexpected field tag {} in the response", what, tag);
    uint64_t length = 0;
    for (int shift = 0;; shift += 7) {
      const int byte = reader.next_byte();
      GL_CHECK(byte != -1 && shift < 64, "{}: truncated response", what);
      length |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    GL_CHECK(length <= reader.left(), "{}: field {} of {} bytes, but only {} follow", what,
             tag >> 3, length, reader.left());
    reader.read(length, open(tag >> 3, length, reader.left() - length));
  }
}

std::vector<at::Tensor> read_int64_fields(const grpc::ByteBuffer& message, int max_field,
                                          const std::string& what) {
  std::vector<at::Tensor> fields(static_cast<std::size_t>(max_field) + 1);
  read_raw_message(
      message,
      [&](int number, uint64_t length, uint64_t) -> PieceSink {
        GL_CHECK(number <= max_field && length % sizeof(int64_t) == 0,
                 "{}: unexpected field {} of {} bytes", what, number, length);
        at::Tensor& field = fields[static_cast<std::size_t>(number)];
        field = at::empty({static_cast<int64_t>(length / sizeof(int64_t))}, at::kLong);
        auto* place = static_cast<char*>(field.data_ptr());
        return [place](const char* data, std::size_t size) mutable {
          std::memcpy(place, data, size);
          place += size;
        };
      },
      what);
  return fields;
}

void deliver_pulled_rows(const grpc::ByteBuffer& response, int64_t row_bytes, int64_t count,
                         int64_t first, const GraphClient::RowSink& sink, const std::string& what) {
  GL_CHECK(row_bytes > 0, "{}: rows of {} bytes", what, row_bytes);
  bool seen = false;
  std::string partial;
  int64_t row = first;
  const PieceSink rows = [&](const char* data, std::size_t piece) {
    auto size = static_cast<int64_t>(piece);
    if (!partial.empty()) {
      const int64_t take =
          std::min<int64_t>(size, row_bytes - static_cast<int64_t>(partial.size()));
      partial.append(data, static_cast<std::size_t>(take));
      data += take;
      size -= take;
      if (static_cast<int64_t>(partial.size()) < row_bytes) return;
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
  };
  read_raw_message(
      response,
      [&](int number, uint64_t length, uint64_t following) {
        // The rows field must be the whole message: checked before any row is handed over.
        GL_CHECK(number == 1 && following == 0 && static_cast<int64_t>(length) == count * row_bytes,
                 "{}: field {} of {} bytes (and {} bytes after it) for {} rows of {} bytes", what,
                 number, length, following, count, row_bytes);
        seen = true;
        return rows;
      },
      what);
  GL_CHECK(seen || count == 0, "{}: no rows for {} requested", what, count);
}

sampling::SampledEdges read_sample_response(const grpc::ByteBuffer& response, int64_t num_seeds,
                                            bool edge_ids, const std::string& what) {
  // Fields as numbered in SampleResponse; edge types only for typed graphs.
  const std::vector<at::Tensor> fields = read_int64_fields(response, 4, what);
  GL_CHECK(fields[1].defined() && fields[2].defined(), "{}: indptr or neighbors are missing", what);
  GL_CHECK(fields[3].defined() == edge_ids, "{}: edge ids {}", what,
           edge_ids ? "are missing" : "came though the request left them out");
  sampling::SampledEdges edges{fields[1], fields[2], fields[3], fields[4]};
  const int64_t picks = edges.neighbors.numel();
  GL_CHECK(edges.indptr.numel() == num_seeds + 1 &&
               (!edge_ids || edges.edge_ids.numel() == picks) &&
               (!edges.edge_types.defined() || edges.edge_types.numel() == picks),
           "{}: sizes do not match {} seeds", what, num_seeds);
  const int64_t* offsets = edges.indptr.data_ptr<int64_t>();
  bool ordered = offsets[0] == 0 && offsets[num_seeds] == picks;
  for (int64_t i = 0; ordered && i < num_seeds; ++i) ordered = offsets[i] <= offsets[i + 1];
  GL_CHECK(ordered, "{}: indptr is not a non-decreasing run from 0 to {}", what, picks);
  return edges;
}

}  // namespace graphloom::distributed
