// The ip config reader.
#include "graphloom/distributed/runtime/ip_config.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "graphloom/base/error.h"

namespace graphloom::distributed {

std::vector<std::vector<std::string>> read_ip_config(const std::filesystem::path& path,
                                                     int servers_per_machine) {
  GL_CHECK(servers_per_machine >= 1, "servers per machine must be >= 1, got {}",
           servers_per_machine);
  std::ifstream in(path);
  GL_CHECK(in.good(), "cannot read ip config '{}'", path.string());
  std::vector<std::vector<std::string>> machines;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string ip, extra;
    int port = 30050;
    if (!(fields >> ip)) continue;  // blank line
    if (std::string port_text; fields >> port_text) {
      try {
        std::size_t used = 0;
        port = std::stoi(port_text, &used);
        GL_CHECK(used == port_text.size(), "");
      } catch (const std::exception&) {
        GL_THROW("ip config '{}' line {}: '{}' is not a port", path.string(), line_number,
                 port_text);
      }
    }
    GL_CHECK(!(fields >> extra), "ip config '{}' line {}: expected 'ip [port]', got '{}'",
             path.string(), line_number, line);
    GL_CHECK(port >= 1 && port + servers_per_machine - 1 <= 65535,
             "ip config '{}' line {}: port {} out of range for {} servers", path.string(),
             line_number, port, servers_per_machine);
    std::vector<std::string> servers;
    for (int i = 0; i < servers_per_machine; ++i) {
      servers.push_back(fmt::format("{}:{}", ip, port + i));
    }
    machines.push_back(std::move(servers));
  }
  GL_CHECK(!machines.empty(), "ip config '{}' lists no machine", path.string());
  return machines;
}

}  // namespace graphloom::distributed
