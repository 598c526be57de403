// SampleNeighbors requests with every field drawn from its full range: the input is read as
// flags, a fanout, up to three edge-type fanouts and seeds, all raw int64 (so 2^62, INT64_MIN,
// -1 and foreign ids are one byte flip away). Each request goes to an in-process server with a
// 1 MiB message limit, and the same seeds to the sampling kernel under a small pick budget.
// The server must answer every one (OK with one offset per seed, or a refusal with a message)
// and keep serving; the kernel must answer or throw graphloom::Error. A crash, a sanitizer
// report, an unanswered call or an answer of the wrong shape is a finding.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <ATen/ATen.h>

#include "fuzz_support.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "graphloom/partition/partition_format.h"
#include "graphloom/sampling/local_neighbor_source.h"
#include "graphloom_proto/graph_service.pb.h"
#include "rpc_call.h"

namespace {

struct Server {
  Server()
      : server({.partition_dir = graphloom::fuzz::tiny_partition(),
                .part = 0,
                .address = "127.0.0.1:0",
                .insecure = true,
                .max_message_bytes = 1 << 20}),
        channel(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials())),
        part(graphloom::partition::load_partition(graphloom::fuzz::tiny_partition(), 0)) {}
  graphloom::distributed::GraphServer server;
  std::shared_ptr<grpc::Channel> channel;
  graphloom::partition::Partition part;
};

int64_t read_int64(const uint8_t*& data, std::size_t& size) {
  int64_t value = 0;
  const std::size_t taken = std::min(size, sizeof(value));
  std::memcpy(&value, data, taken);
  data += taken;
  size -= taken;
  return value;
}

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "sample_request: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static Server server;
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  ++data, --size;
  graphloom::rpc::SampleRequest request;
  request.set_replace(flags & 1);
  request.set_weighted(flags & 2);
  request.set_out_edges(flags & 4);
  request.set_omit_edge_ids(flags & 8);
  request.set_fanout(read_int64(data, size));
  for (int r = 0; r < ((flags >> 4) & 3); ++r)
    request.add_edge_type_fanouts(read_int64(data, size));
  const std::size_t seed_bytes = size / sizeof(int64_t) * sizeof(int64_t);
  request.set_seeds(std::string(reinterpret_cast<const char*>(data), seed_bytes));

  const grpc::Status status =
      graphloom::fuzz::raw_call(server.channel, "/graphloom.rpc.GraphService/SampleNeighbors",
                                request.SerializeAsString(), std::chrono::seconds(30));
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
      status.error_code() == grpc::StatusCode::UNKNOWN ||
      (!status.ok() && status.error_message().empty())) {
    finding("the server did not answer clearly", status.error_message());
  }
  // The kernel itself, in the part's local ids, under a budget a few times the fanouts.
  const auto num_seeds = static_cast<int64_t>(seed_bytes / sizeof(int64_t));
  at::Tensor seeds = at::empty({num_seeds}, at::kLong);
  if (num_seeds > 0) std::memcpy(seeds.data_ptr(), data, seed_bytes);
  graphloom::sampling::SampleOptions options{
      .replace = request.replace(), .weighted = request.weighted(), .max_picks = 1 << 16};
  if (server.part.graph.type_per_edge.defined()) {
    options.edge_type_fanouts.assign(request.edge_type_fanouts().begin(),
                                     request.edge_type_fanouts().end());
  }
  try {
    const graphloom::sampling::SampledEdges edges = graphloom::sampling::sample_csc_neighbors(
        server.part.graph, seeds, request.fanout(), options);
    if (edges.indptr.numel() != num_seeds + 1 ||
        edges.indptr[num_seeds].item<int64_t>() != edges.neighbors.numel()) {
      finding("the kernel's answer has the wrong shape", std::to_string(num_seeds));
    }
  } catch (const graphloom::Error&) {
  }
  return 0;
}
