// The Pull response's wire format, written and read in gRPC's own slices (internal to the dist
// module): protobuf would copy the rows once more on each side, into a string and out of it.
#pragma once

#include <ATen/core/Tensor.h>
#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <string>

#include "graphloom/dist/graph_client.h"

namespace graphloom::dist {

// The `rows` field (1, length-delimited) of a serialized PullResponse, read from the slices
// gRPC received it in: protobuf would first copy it into a string, one more pass over every
// pulled byte. Checks that it holds exactly `count` rows of `row_bytes` before handing any to
// `sink`, then hands them whole, as rows first, first + 1, ...; a row split between two slices
// is joined in a small buffer. Errors start with `what`.
void deliver_pulled_rows(const grpc::ByteBuffer& response, int64_t row_bytes, int64_t count,
                         int64_t first, const GraphClient::RowSink& sink, const std::string& what);

// A serialized PullResponse holding `rows` (contiguous): the field header in one slice, then
// the tensor's own memory, kept alive until gRPC has sent it.
grpc::ByteBuffer pulled_rows_response(const at::Tensor& rows);

}  // namespace graphloom::dist
