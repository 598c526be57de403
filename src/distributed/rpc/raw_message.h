// Messages made of `bytes` fields (the graph service's bulk arrays), written and read in
// gRPC's own slices: protobuf would copy every byte once more on each side, into a string on
// the server before serializing it, and out of the received slices into a string on the
// client (internal to the dist module).
#pragma once

#include <ATen/core/Tensor.h>
#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "graphloom/distributed/rpc/graph_client.h"
#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::distributed {

// A serialized message whose field `number` holds the raw bytes of `tensor` (made contiguous),
// for each pair: the field headers in small slices, each tensor's own memory as the slice
// after its header, kept alive until gRPC has sent it. Undefined tensors are left out; empty
// ones are sent as fields of length 0 (protobuf reads them as empty), so that a reader can
// tell "none" from "empty", e.g. the edge types of a typed graph's seeds without neighbors.
grpc::ByteBuffer raw_message(const std::vector<std::pair<int, at::Tensor>>& fields);

// Receives a field's bytes piece by piece, in order.
using PieceSink = std::function<void(const char* data, std::size_t size)>;
// Called with a field's number, its length and the bytes of the message after it, before any
// of its bytes; throws to refuse the field, or returns where its bytes go.
using FieldOpener = std::function<PieceSink(int number, uint64_t length, uint64_t following)>;

// Reads a serialized message of `bytes` fields through `open`. A field that is not
// length-delimited, field number 0, a truncated header, or a length past the end is refused;
// errors start with `what`. Unknown fields are refused rather than skipped: servers and
// trainers of a cluster run one build (Metadata reports the servers' version).
void read_raw_message(const grpc::ByteBuffer& message, const FieldOpener& open,
                      const std::string& what);

// The `int64` tensors of a message of bytes fields, indexed by field number (undefined where
// absent); refuses fields numbered above `max_field` and lengths that are not whole int64s.
std::vector<at::Tensor> read_int64_fields(const grpc::ByteBuffer& message, int max_field,
                                          const std::string& what);

// A SampleResponse for `num_seeds` seeds, checked: indptr and neighbors present, edge ids
// present exactly when asked for, every array one entry per pick, and indptr a non-decreasing
// run from 0 to the pick count (DistGraph's merge copies by those offsets).
sampling::SampledEdges read_sample_response(const grpc::ByteBuffer& response, int64_t num_seeds,
                                            bool edge_ids, const std::string& what);

// The `rows` field (1) of a PullResponse: checks that it holds exactly `count` rows of
// `row_bytes` before handing any to `sink`, then hands them whole, as rows first, first + 1,
// ...; a row split between two slices is joined in a small buffer.
void deliver_pulled_rows(const grpc::ByteBuffer& response, int64_t row_bytes, int64_t count,
                         int64_t first, const GraphClient::RowSink& sink, const std::string& what);

}  // namespace graphloom::distributed
