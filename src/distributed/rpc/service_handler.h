// The one error boundary of the graph service's handlers (internal to the rpc module): token
// check, request decoding, the body, and the mapping of every failure to a status with a
// message. Every method is a raw callback method, so that a request that does not decode is
// answered INVALID_ARGUMENT naming the method, not gRPC's bare INTERNAL.
#pragma once

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <string>

#include "graphloom/base/error.h"
#include "graphloom/distributed/rpc/authorization.h"
#include "memory_trimmer.h"

namespace graphloom::distributed {

// Decodes a request; a payload that is not a `Message` is the client's fault.
template <typename Message>
Message parse_request(const grpc::ByteBuffer& bytes, const char* method) {
  Message message;
  grpc::ByteBuffer owned(bytes);  // parsing consumes the buffer (a reference to the slices)
  GL_CHECK(grpc::SerializationTraits<Message>::Deserialize(&owned, &message).ok(),
           "{}: the request is not a valid {} message", method, Message::descriptor()->name());
  return message;
}

template <typename Message>
grpc::ByteBuffer serialize_response(const Message& message) {
  grpc::ByteBuffer bytes;
  bool own_buffer = false;
  GL_CHECK(grpc::SerializationTraits<Message>::Serialize(message, &bytes, &own_buffer).ok(),
           "cannot serialize a {} response", Message::descriptor()->name());
  return bytes;
}

struct HandlerContext {
  int64_t part = 0;
  bool insecure = false;
  const std::string* token = nullptr;
  MemoryTrimmer* trimmer = nullptr;  // told of every request, to trim when the server is idle
};

// Runs `body` behind the token check. Library errors are the client's fault: over a limit,
// RESOURCE_EXHAUSTED; otherwise INVALID_ARGUMENT. Anything else is an internal fault, logged,
// and still answered with its message. The server keeps serving either way.
template <typename Body>
grpc::Status handle_request(const HandlerContext& handler, grpc::ServerContextBase& context,
                            const char* method, Body&& body) {
  if (!handler.insecure) {
    bool found = false;
    if (!carries_token(context, *handler.token, &found)) {
      spdlog::warn("part {}: {} from {} refused: {} cluster token", handler.part, method,
                   context.peer(), found ? "wrong" : "missing");
      return {grpc::StatusCode::UNAUTHENTICATED, "missing or wrong cluster token"};
    }
  }
  const MemoryTrimmer::Request in_flight(*handler.trimmer);
  try {
    body();
    return grpc::Status::OK;
  } catch (const LimitError& e) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, fmt::format("{}: {}", method, e.what())};
  } catch (const Error& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::bad_alloc&) {
    spdlog::error("part {}: {} ran out of memory", handler.part, method);
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            fmt::format("{}: the server ran out of memory for this request", method)};
  } catch (const std::exception& e) {
    spdlog::error("part {}: {} failed: {}", handler.part, method, e.what());
    const std::string what = e.what();
    return {grpc::StatusCode::INTERNAL,
            fmt::format("{} failed in the server: {}", method, what.empty() ? "unknown" : what)};
  }
}

// A raw unary method: decodes a `Request`, runs `body(request, response_bytes)`, finishes.
template <typename Request, typename Body>
grpc::ServerUnaryReactor* raw_unary(const HandlerContext& handler,
                                    grpc::CallbackServerContext* context, const char* method,
                                    const grpc::ByteBuffer* request_bytes,
                                    grpc::ByteBuffer* response_bytes, Body&& body) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  // The request's bytes are copied while it is decoded: they count as memory it made us use.
  handler.trimmer->note_allocated(static_cast<int64_t>(request_bytes->Length()));
  reactor->Finish(handle_request(handler, *context, method, [&] {
    body(parse_request<Request>(*request_bytes, method), *response_bytes);
  }));
  return reactor;
}

// raw_unary for a method with a protobuf response: `body(request, response)`.
template <typename Request, typename Response, typename Body>
grpc::ServerUnaryReactor* message_unary(const HandlerContext& handler,
                                        grpc::CallbackServerContext* context, const char* method,
                                        const grpc::ByteBuffer* request_bytes,
                                        grpc::ByteBuffer* response_bytes, Body&& body) {
  return raw_unary<Request>(handler, context, method, request_bytes, response_bytes,
                            [&](const Request& request, grpc::ByteBuffer& out) {
                              Response response;
                              body(request, response);
                              out = serialize_response(response);
                            });
}

}  // namespace graphloom::distributed
