// Every request decoder of the graph server: an in-process server over a small partition
// gets the input's bytes as the body of the method its first byte picks (all but Shutdown).
// It must answer each one, OK or a refusal, and keep serving: a crash, a sanitizer report or
// a dropped call is a finding.
#include <cstdio>
#include <cstdlib>

#include "fuzz_support.h"
#include "graphloom/distributed/rpc/graph_server.h"
#include "rpc_call.h"

namespace {

struct Server {
  Server()
      : server({.partition_dir = graphloom::fuzz::tiny_partition(),
                .part = 0,
                .address = "127.0.0.1:0",
                .insecure = true}),
        channel(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials())) {}
  graphloom::distributed::GraphServer server;
  std::shared_ptr<grpc::Channel> channel;
};

constexpr const char* kMethods[] = {"/graphloom.rpc.GraphService/SampleNeighbors",
                                    "/graphloom.rpc.GraphService/Pull",
                                    "/graphloom.rpc.GraphService/Push",
                                    "/graphloom.rpc.GraphService/CreateTensor",
                                    "/graphloom.rpc.GraphService/SparseUpdate",
                                    "/graphloom.rpc.GraphService/Metadata",
                                    "/graphloom.rpc.GraphService/Health"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static Server server;
  if (size == 0) return 0;
  const char* method = kMethods[data[0] % std::size(kMethods)];
  const grpc::Status status = graphloom::fuzz::raw_call(
      server.channel, method, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1),
      std::chrono::seconds(10));
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
      status.error_code() == grpc::StatusCode::UNKNOWN) {
    std::fprintf(stderr, "%s: the server did not answer: %s\n", method,
                 status.error_message().c_str());
    std::abort();
  }
  return 0;
}
