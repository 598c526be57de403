// Token comparison for the gRPC services.
#include "graphloom/distributed/rpc/authorization.h"

namespace graphloom::distributed {

bool same_token(std::string_view given, std::string_view expected) {
  if (expected.empty()) return given.empty();
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < given.size(); ++i) {
    difference |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  }
  return difference == 0;
}

bool carries_token(const grpc::ServerContextBase& context, const std::string& token, bool* found) {
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  *found = it != metadata.end();
  const std::string_view given =
      *found ? std::string_view(it->second.data(), it->second.size()) : std::string_view();
  return same_token(given, "Bearer " + token);
}

}  // namespace graphloom::distributed
