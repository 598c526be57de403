// The cluster-token check shared by graphloom's gRPC services (graph servers, the rendezvous
// store): every call carries "Bearer <token>" in its "authorization" metadata.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>
#include <string_view>

namespace graphloom::distributed {

// Equal-time comparison, so the token cannot be guessed byte by byte from response times.
bool same_token(std::string_view given, std::string_view expected);

// Whether `context`'s call carries `token`; `found` tells whether it carried any.
bool carries_token(const grpc::ServerContextBase& context, const std::string& token, bool* found);

}  // namespace graphloom::distributed
