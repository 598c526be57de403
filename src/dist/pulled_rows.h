// Reading a Pull response where gRPC received it (internal to the dist module).
#pragma once

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

}  // namespace graphloom::dist
