// Messages of bytes fields in gRPC's slices: a server's response carries its tensors without a
// copy; pulled rows split between slices arrive whole and in order; a response of the wrong
// size or shape is refused before any row is handed over.
#include "distributed/rpc/raw_message.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "graphloom/base/error.h"
#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

// A serialized PullResponse with `rows` bytes, cut into slices at `cuts` (byte offsets).
grpc::ByteBuffer response_in_slices(const std::string& rows, const std::vector<std::size_t>& cuts) {
  std::string message;
  if (!rows.empty()) {
    message.push_back(0x0a);
    for (uint64_t n = rows.size();; n >>= 7) {
      message.push_back(static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0)));
      if (n < 0x80) break;
    }
    message += rows;
  }
  std::vector<grpc::Slice> slices;
  std::size_t begin = 0;
  for (const std::size_t cut : cuts) {
    slices.emplace_back(message.data() + begin, cut - begin);
    begin = cut;
  }
  slices.emplace_back(message.data() + begin, message.size() - begin);
  return grpc::ByteBuffer(slices.data(), slices.size());
}

grpc::ByteBuffer one_slice(const std::string& bytes) {
  const grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

struct Received {
  std::string bytes;
  std::vector<int64_t> firsts;
};

TEST(PulledRows, RowsSplitBetweenSlicesArriveWholeAndInOrder) {
  std::string rows;
  for (int i = 0; i < 300 * 7; ++i) rows.push_back(static_cast<char>(i * 31));
  // Cuts inside the length varint (300 * 7 = 2100 takes two bytes), inside rows, on a row
  // boundary, and two next to each other.
  const grpc::ByteBuffer response = response_in_slices(rows, {2, 10, 17, 24, 24 + 7, 1000, 1001});
  Received received;
  deliver_pulled_rows(
      response, 7, 300, 5,
      [&](int64_t first, const char* data, int64_t count) {
        EXPECT_EQ(first, 5 + static_cast<int64_t>(received.bytes.size()) / 7);
        received.firsts.push_back(first);
        received.bytes.append(data, static_cast<std::size_t>(count * 7));
      },
      "test");
  EXPECT_EQ(received.bytes, rows);
  EXPECT_GT(received.firsts.size(), 3u);
  // No rows: an empty response.
  int calls = 0;
  deliver_pulled_rows(
      response_in_slices("", {}), 7, 0, 0, [&](int64_t, const char*, int64_t) { ++calls; }, "test");
  EXPECT_EQ(calls, 0);
}

TEST(PulledRows, AResponseOfTheWrongSizeOrShapeIsRefusedBeforeAnyRow) {
  struct Case {
    grpc::ByteBuffer response;
    int64_t row_bytes, count;
    const char* error;
  };
  const Case cases[] = {
      {response_in_slices(std::string(70, 'x'), {30}), 7, 11,
       "server A: field 1 of 70 bytes (and 0 bytes after it) for 11 rows"},
      // Right size, then more: refused before the rows reach the sink.
      {one_slice("\x0a\x01x\x0a\x01y"), 1, 1, "field 1 of 1 bytes (and 3 bytes after it)"},
      {one_slice("\x02\x00"), 1, 0, "unexpected field tag 2"},  // field number 0
      {response_in_slices("", {}), 1, 1, "server A: no rows for 1 requested"},
      // Raw messages: field 2; field 1 as a varint; a length past the end; a cut varint.
      {one_slice("\x12\x01x"), 1, 1, "server A: field 2 of 1 bytes"},
      {one_slice("\x08\x01"), 1, 1, "unexpected field tag 8"},
      {one_slice("\x0a\x05xy"), 1, 5, "field 1 of 5 bytes, but only 2 follow"},
      {one_slice("\x0a\x80"), 1, 1, "truncated"},
  };
  int calls = 0;
  for (const Case& c : cases) {
    const std::string error = testing::error_of([&] {
      deliver_pulled_rows(
          c.response, c.row_bytes, c.count, 0, [&](int64_t, const char*, int64_t) { ++calls; },
          "server A");
    });
    EXPECT_NE(error.find(c.error), std::string::npos) << error;
  }
  EXPECT_EQ(calls, 0);
}

TEST(RawMessage, AResponseCarriesItsTensorsUntilRead) {
  // 20,000 rows of 7 bytes: a three-byte length varint.
  at::Tensor rows = at::randint(0, 256, {20000, 7}, at::kByte);
  const at::Tensor expected = rows.clone();
  const grpc::ByteBuffer response = raw_message({{1, rows}});
  rows.fill_(0);  // the response holds the tensor itself: changes are sent, nothing was copied
  rows = at::Tensor();
  const at::Tensor received = at::full({20000, 7}, 0xff, at::kByte);
  auto* data = received.data_ptr<uint8_t>();
  deliver_pulled_rows(
      response, 7, 20000, 0,
      [&](int64_t first, const char* bytes, int64_t count) {
        std::memcpy(data + first * 7, bytes, static_cast<std::size_t>(count * 7));
      },
      "test");
  EXPECT_TRUE(at::equal(received, at::zeros_like(expected)));
  // And an unchanged tensor arrives as it was; no rows is an empty response.
  deliver_pulled_rows(
      raw_message({{1, expected}}), 7, 20000, 0,
      [&](int64_t first, const char* bytes, int64_t count) {
        std::memcpy(data + first * 7, bytes, static_cast<std::size_t>(count * 7));
      },
      "test");
  EXPECT_TRUE(at::equal(received, expected));
  int calls = 0;
  deliver_pulled_rows(
      raw_message({{1, at::empty({0, 7}, at::kByte)}}), 7, 0, 0,
      [&](int64_t, const char*, int64_t) { ++calls; }, "test");
  EXPECT_EQ(calls, 0);
}

TEST(RawMessage, Int64FieldsArriveByNumberEmptyOnesEmptyAndAbsentOnesUndefined) {
  const at::Tensor indptr = at::arange(0, 40000, at::kLong);
  const at::Tensor strided = at::arange(0, 20, at::kLong).slice(0, 0, 20, 2);  // not contiguous
  const std::vector<at::Tensor> fields = read_int64_fields(
      raw_message({{1, indptr}, {2, at::empty({0}, at::kLong)}, {4, strided}}), 4, "test");
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_TRUE(at::equal(fields[1], indptr));
  EXPECT_EQ(fields[2].numel(), 0);  // empty: a field of length 0, not an absent one
  EXPECT_FALSE(fields[3].defined());
  EXPECT_TRUE(at::equal(fields[4], strided));
  // A field number past the expected ones, or a length that is not whole int64s.
  EXPECT_NE(testing::error_of([&] {
              read_int64_fields(raw_message({{5, indptr}}), 4, "server F");
            }).find("server F: unexpected field 5"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] {
              read_int64_fields(raw_message({{1, at::ones({3}, at::kByte)}}), 4, "G");
            }).find("unexpected field 1 of 3 bytes"),
            std::string::npos);
}

TEST(SampleResponse, IsReadWithOrWithoutEdgeIdsAndRefusedWhenMalformed) {
  const auto longs = [](std::vector<int64_t> values) { return at::tensor(values, at::kLong); };
  const at::Tensor indptr = longs({0, 2, 2, 3});
  const at::Tensor neighbors = longs({7, 8, 9});
  const at::Tensor ids = longs({70, 80, 90});
  const sampling::SampledEdges with =
      read_sample_response(raw_message({{1, indptr}, {2, neighbors}, {3, ids}}), 3, true, "A");
  EXPECT_TRUE(at::equal(with.indptr, indptr));
  EXPECT_TRUE(at::equal(with.neighbors, neighbors));
  EXPECT_TRUE(at::equal(with.edge_ids, ids));
  const sampling::SampledEdges without =
      read_sample_response(raw_message({{1, indptr}, {2, neighbors}}), 3, false, "A");
  EXPECT_TRUE(at::equal(without.neighbors, neighbors));
  EXPECT_FALSE(without.edge_ids.defined());
  EXPECT_FALSE(without.edge_types.defined());

  struct Case {
    std::vector<std::pair<int, at::Tensor>> fields;
    bool edge_ids;
    const char* error;
  };
  const std::vector<Case> cases = {
      {{{1, indptr}, {3, ids}}, false, "A: indptr or neighbors are missing"},
      {{{1, indptr}, {2, neighbors}}, true, "A: edge ids are missing"},
      {{{1, indptr}, {2, neighbors}, {3, ids}}, false, "came though the request left them out"},
      {{{1, longs({0, 3})}, {2, neighbors}}, false, "sizes do not match 3 seeds"},
      {{{1, indptr}, {2, neighbors}, {3, longs({1})}}, true, "sizes do not match"},
      {{{1, indptr}, {2, neighbors}, {4, longs({1, 2})}}, false, "sizes do not match"},
      // Offsets that would send the merge past the picks, or backwards.
      {{{1, longs({0, 2, 2, 4})}, {2, neighbors}}, false, "non-decreasing run from 0 to 3"},
      {{{1, longs({0, 3, 1, 3})}, {2, neighbors}}, false, "non-decreasing run from 0 to 3"},
      {{{1, indptr}, {2, neighbors}, {5, ids}}, false, "field 5"},
  };
  for (const Case& c : cases) {
    const std::string error =
        testing::error_of([&] { read_sample_response(raw_message(c.fields), 3, c.edge_ids, "A"); });
    EXPECT_NE(error.find(c.error), std::string::npos) << c.error << " / " << error;
  }
}

}  // namespace
}  // namespace graphloom::distributed
