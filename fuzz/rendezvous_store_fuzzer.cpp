// The trainers' rendezvous store server: the input's bytes are the StoreRequest of the method
// its first byte picks. Get and Wait get a timeout of 0 appended (protobuf's last value wins),
// so that missing keys are answered at once. Every call must be answered.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "distributed/runtime/rendezvous_store.h"
#include "fuzz_support.h"
#include "rpc_call.h"

namespace {

struct Store {
  Store()
      : server("127.0.0.1:0", ""),
        channel(grpc::CreateChannel("127.0.0.1:" + std::to_string(server.port()),
                                    grpc::InsecureChannelCredentials())) {}
  graphloom::distributed::RendezvousStoreServer server;
  std::shared_ptr<grpc::Channel> channel;
};

constexpr const char* kMethods[] = {
    "/graphloom.rpc.RendezvousStore/Set",       "/graphloom.rpc.RendezvousStore/Get",
    "/graphloom.rpc.RendezvousStore/Add",       "/graphloom.rpc.RendezvousStore/CompareSet",
    "/graphloom.rpc.RendezvousStore/Check",     "/graphloom.rpc.RendezvousStore/Wait",
    "/graphloom.rpc.RendezvousStore/DeleteKey", "/graphloom.rpc.RendezvousStore/NumKeys"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static Store store;
  if (size == 0) return 0;
  const std::size_t choice = data[0] % std::size(kMethods);
  std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (choice == 1 || choice == 5) body += std::string("\x30\x00", 2);  // timeout_ms = 0
  const grpc::Status status =
      graphloom::fuzz::raw_call(store.channel, kMethods[choice], body, std::chrono::seconds(10));
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::UNKNOWN ||
      (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && choice != 1 && choice != 5)) {
    std::fprintf(stderr, "%s: the store did not answer: %s\n", kMethods[choice],
                 status.error_message().c_str());
    std::abort();
  }
  return 0;
}
