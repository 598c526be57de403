// The client's decoders of server responses: SampleNeighbors (read_sample_response), Pull
// (deliver_pulled_rows) and the raw field reader under both. Four leading bytes choose the
// decoder, its two parameters and where the message is cut in two slices (gRPC hands a message
// over in slices, and a field may straddle them); the rest is the response.
#include <grpcpp/support/byte_buffer.h>

#include <cstdlib>

#include "distributed/rpc/raw_message.h"
#include "fuzz_support.h"

namespace {
volatile char g_checksum = 0;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace dist = graphloom::distributed;
  if (size < 4) return 0;
  const uint8_t decoder = data[0] % 3, a = data[1], b = data[2], cut = data[3];
  data += 4;
  size -= 4;
  const std::size_t first = size > 0 ? cut % (size + 1) : 0;
  grpc::Slice slices[] = {grpc::Slice(data, first), grpc::Slice(data + first, size - first)};
  const grpc::ByteBuffer message(slices, 2);
  graphloom::fuzz::expect_clean_rejection([&] {
    switch (decoder) {
      case 0: {
        const auto edges = dist::read_sample_response(message, a, (b & 1) != 0, "fuzz");
        // The merge trusts these offsets: they must index the picks.
        if (edges.indptr.numel() != a + 1) std::abort();
        break;
      }
      case 1: {
        const int64_t row_bytes = a % 64 + 1, count = b;
        int64_t delivered = 0;
        dist::deliver_pulled_rows(
            message, row_bytes, count, 0,
            [&](int64_t first_row, const char* rows, int64_t rows_here) {
              if (first_row != delivered || first_row + rows_here > count) std::abort();
              // Every delivered byte is read: ASan sees a row past the message.
              char checksum = 0;
              for (int64_t i = 0; i < rows_here * row_bytes; ++i) checksum ^= rows[i];
              g_checksum = checksum;
              delivered += rows_here;
            },
            "fuzz");
        if (delivered != count) std::abort();
        break;
      }
      default:
        dist::read_int64_fields(message, 8, "fuzz");
    }
  });
  return 0;
}
