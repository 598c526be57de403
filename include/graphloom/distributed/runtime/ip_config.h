// DGL's ip config: the machines of a cluster, one per line, "ip [port]" (port default 30050).
// Machine m runs part m; its S graph servers listen on port .. port+S-1.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace graphloom::distributed {

// Each machine's server addresses ("ip:port"). Throws graphloom::Error naming the file and
// line of a malformed entry.
std::vector<std::vector<std::string>> read_ip_config(const std::filesystem::path& path,
                                                     int servers_per_machine);

}  // namespace graphloom::distributed
