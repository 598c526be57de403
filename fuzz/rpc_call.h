// One unary call with a raw request body to a method of an in-process server: what a client
// that speaks no protobuf (an attacker, a fuzzer) can send.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>

#include <chrono>
#include <string_view>

namespace graphloom::fuzz {

inline grpc::Status raw_call(const std::shared_ptr<grpc::Channel>& channel, const char* method,
                             std::string_view body, std::chrono::milliseconds deadline) {
  const grpc::internal::RpcMethod rpc(method, grpc::internal::RpcMethod::NORMAL_RPC, channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  grpc::Slice slice(body.data(), body.size());
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  return grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer, grpc::ByteBuffer,
                                           grpc::ByteBuffer>(channel.get(), rpc, &context, request,
                                                             &response);
}

}  // namespace graphloom::fuzz
