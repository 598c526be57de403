// One unary call with a raw body to a method of a graph server, carrying the cluster token:
// what a client that holds the token but speaks no protobuf (a buggy or hostile one) can send.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>

#include <chrono>
#include <string>
#include <string_view>

#include "support/test_support.h"

namespace graphloom::testing {

struct RawReply {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
};

inline RawReply raw_request(const std::string& address, const std::string& method,
                            std::string_view body, const std::string& token = kClusterToken) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxSendMessageSize(256 << 20);
  arguments.SetMaxReceiveMessageSize(256 << 20);
  const auto channel =
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments);
  const std::string path = "/graphloom.rpc.GraphService/" + method;
  const grpc::internal::RpcMethod rpc(path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC, channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30) * kSlowdown);
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
  grpc::Slice slice(body.data(), body.size());
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  const grpc::Status status = grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer,
                                                                grpc::ByteBuffer, grpc::ByteBuffer>(
      channel.get(), rpc, &context, request, &response);
  return {status.error_code(), status.error_message()};
}

}  // namespace graphloom::testing
