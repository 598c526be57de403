// launch_cluster: the processes of every machine of the ip config, checked before any starts.
// Starts the graph servers and the trainers of every machine of the ip config (local processes
// for this machine's addresses, ssh for the others), gives each trainer its rank, world,
// rendezvous and thread share, forwards SIGINT/SIGTERM, stops the servers when the trainers are
// done, and returns the first failure's exit code.
#include <ifaddrs.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <set>

#include "graphloom/base/error.h"
#include "graphloom/distributed/rpc/shared_partition.h"
#include "graphloom/distributed/runtime/cluster_launch.h"
#include "graphloom/distributed/runtime/cluster_options.h"
#include "graphloom/distributed/runtime/ip_config.h"
#include "graphloom/distributed/runtime/process_environment.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "graphloom/distributed/runtime/process_launcher.h"
#include "graphloom/partition/partition_format.h"

namespace graphloom::distributed {
namespace {

// This machine's IP addresses (and loopback): machines of the ip config at one of them run as
// local processes.
std::set<std::string> local_addresses() {
  std::set<std::string> addresses{"127.0.0.1", "localhost", "::1"};
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return addresses;
  for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    const int family = entry->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char host[NI_MAXHOST] = {};
    const socklen_t size = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (::getnameinfo(entry->ifa_addr, size, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) == 0) {
      addresses.insert(host);
    }
  }
  ::freeifaddrs(list);
  return addresses;
}

// "10.0.0.1:30050" -> "10.0.0.1".
std::string host_of(const std::string& address) { return address.substr(0, address.rfind(':')); }

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// A process on machine `ip`: itself when local, else through ssh with its environment and
// working directory spelled out on the remote command line.
ProcessSpec on_machine(const ClusterLaunchOptions& launch, const std::string& ip, bool local,
                       ProcessSpec spec) {
  if (local) return spec;
  // The shared-memory directory, like the working directory, is the same path on every machine.
  if (const char* shm_dir = std::getenv("GRAPHLOOM_SHM_DIR"); shm_dir != nullptr && *shm_dir) {
    spec.environment.emplace("GRAPHLOOM_SHM_DIR", shm_dir);
  }
  std::string remote = "cd " + shell_quote(std::filesystem::current_path().string()) + " && env";
  // Appended piece by piece: GCC 12 warns (-Wstringop-overflow, a false positive) on
  // `" " + std::string&&` inlined here.
  for (const auto& [key, value] : spec.environment) {
    remote.append(" ").append(key).append("=").append(shell_quote(value));
  }
  for (const std::string& arg : spec.argv) remote.append(" ").append(shell_quote(arg));
  spec.argv = {"/usr/bin/ssh",
               "-p",
               std::to_string(launch.ssh_port),
               "-o",
               "BatchMode=yes",
               launch.ssh_user.empty() ? ip : launch.ssh_user + "@" + ip,
               remote};
  spec.environment.clear();
  return spec;
}

// Before anything starts: every other machine answers over ssh (an unreachable host is a
// clear error now, not servers that never come up and trainers that name the address only when
// their wait times out), and, when this machine runs a part, the partition is readable here.
void check_machines(const ClusterLaunchOptions& launch, const std::vector<std::string>& remote,
                    bool any_local) {
  if (any_local) partition::read_partition_info(launch.part_config);
  std::vector<std::future<std::string>> answers;
  for (const std::string& ip : remote) {
    answers.push_back(std::async(std::launch::async, [&launch, ip] {
      const std::string target = launch.ssh_user.empty() ? ip : launch.ssh_user + "@" + ip;
      const std::string command =
          fmt::format("/usr/bin/ssh -p {} -o BatchMode=yes -o ConnectTimeout=10 {} true 2>&1",
                      launch.ssh_port, shell_quote(target));
      FILE* pipe = ::popen(command.c_str(), "r");
      if (pipe == nullptr) return fmt::format("{} (could not run /usr/bin/ssh)", ip);
      std::string output;
      char buffer[256];
      while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
      const int status = ::pclose(pipe);
      while (!output.empty() && std::isspace(static_cast<unsigned char>(output.back()))) {
        output.pop_back();
      }
      if (status == 0) return std::string();
      return fmt::format("{} ({})", ip, output.empty() ? "ssh failed" : output);
    }));
  }
  std::vector<std::string> failures;
  for (auto& answer : answers) {
    if (std::string failure = answer.get(); !failure.empty()) failures.push_back(failure);
  }
  GL_CHECK(failures.empty(),
           "launch: cannot reach these machines over ssh (port {}; BatchMode, so keys, not "
           "passwords): {}; nothing was started",
           launch.ssh_port, fmt::join(failures, "; "));
}

// The trainer command without the flags launch gives every trainer itself: a copy with the
// same value is dropped (e.g. the --part-config that `train` needs without launch); a
// different value is refused, naming both, since a trainer cannot take two.
std::vector<std::string> trainer_command(const ClusterLaunchOptions& launch) {
  const auto same_path = [](const std::string& a, const std::string& b) {
    std::error_code error;
    return std::filesystem::weakly_canonical(a, error) == std::filesystem::weakly_canonical(b);
  };
  const std::map<std::string, std::string> owned{
      {"--part-config", launch.part_config},
      {"--ip-config", launch.ip_config},
      {"--num-servers", std::to_string(launch.num_servers)},
      {"--cluster-id", launch.cluster_id},
      {"--token-file", launch.token_file},
      {"--tls-ca", launch.tls_ca},
      {"--machine", ""}};
  std::vector<std::string> kept;
  const std::vector<std::string>& command = launch.command;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const std::string& word = command[i];
    const std::size_t equals = word.find('=');
    const std::string flag = word.substr(0, equals);
    const auto found = owned.find(flag);
    if (found == owned.end() || i == 0) {
      kept.push_back(word);
      continue;
    }
    const bool inline_value = equals != std::string::npos;
    if (!inline_value && i + 1 >= command.size()) {
      throw UsageError(fmt::format("launch: the trainer command ends with {} and no value", flag));
    }
    const std::string value = inline_value ? word.substr(equals + 1) : command[++i];
    const bool paths = flag == "--part-config" || flag == "--ip-config" || flag == "--token-file" ||
                       flag == "--tls-ca";
    const bool same = !found->second.empty() &&
                      (value == found->second || (paths && same_path(value, found->second)));
    if (!same) {
      throw UsageError(fmt::format(
          "launch: the trainer command gives {} {}, but launch passes {} to every trainer "
          "itself{}: drop it from the command after --{}",
          flag, value, flag,
          found->second.empty() ? " (each trainer its own)" : fmt::format(" ({})", found->second),
          found->second.empty() ? "" : ", or give launch the same value"));
    }
    spdlog::info("launch: the trainer command's {} {} is the one launch passes on", flag, value);
  }
  return kept;
}

// Whether the trainer command runs graphloom itself (which takes the cluster as flags) rather
// than, say, a Python script (which reads it from the environment: graphloom.distributed).
bool runs_graphloom(const std::string& program, const std::string& self) {
  std::error_code error;
  return program == "graphloom" || std::filesystem::path(program).filename() == "graphloom" ||
         std::filesystem::weakly_canonical(program, error) == self;
}

// The cluster as the trainers of machine `machine` see it: passed as flags to graphloom
// trainers and in the environment to every trainer (graphloom.distributed's initialize()
// reads it; DGL passes the same through DGL_IP_CONFIG, DGL_CONF_PATH, ...).
ClusterOptions trainer_cluster(const ClusterLaunchOptions& launch, std::size_t machine) {
  ClusterOptions cluster;
  cluster.part_config = launch.part_config;
  cluster.ip_config = launch.ip_config;
  cluster.servers_per_machine = launch.num_servers;
  cluster.machine = static_cast<int>(machine);
  cluster.cluster_id = launch.cluster_id;
  cluster.token_file = launch.token_file;
  cluster.tls_ca = launch.tls_ca;
  return cluster;
}

// TLS is all or nothing: servers with a certificate, trainers that verify it.
void check_tls(const ClusterLaunchOptions& launch) {
  const bool any = !launch.tls_cert.empty() || !launch.tls_key.empty() || !launch.tls_ca.empty();
  if (any && (launch.tls_cert.empty() || launch.tls_key.empty() || launch.tls_ca.empty())) {
    throw UsageError(
        "launch: TLS needs --tls-cert and --tls-key (the servers' certificate) and --tls-ca "
        "(what the trainers verify it with; the certificate itself when it is self-signed)");
  }
}

}  // namespace

int launch_cluster(const ClusterLaunchOptions& launch) {
  if (launch.command.empty()) {
    throw UsageError("launch: give the trainer command after --, e.g. `-- graphloom train ...`");
  }
  const auto machines = read_ip_config(launch.ip_config, launch.num_servers);
  const std::set<std::string> here = local_addresses();
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();
  const bool graphloom_trainers = runs_graphloom(launch.command[0], self);
  const std::vector<std::string> command =
      graphloom_trainers ? trainer_command(launch) : launch.command;
  const std::string master_ip = host_of(machines[0][0]);
  const int master_port = launch.master_port > 0 ? launch.master_port : find_free_port();
  const int world = static_cast<int>(machines.size()) * launch.num_trainers;
  std::vector<std::string> remote;
  bool any_local = false;
  for (const auto& machine : machines) {
    const std::string ip = host_of(machine[0]);
    if (here.count(ip) > 0) {
      any_local = true;
    } else if (std::find(remote.begin(), remote.end(), ip) == remote.end()) {
      remote.push_back(ip);
    }
  }
  check_tls(launch);
  check_machines(launch, remote, any_local);
  if (launch.token_file.empty()) {
    spdlog::warn("launch: no --token-file: servers run with --insecure");
  }
  // Machines of the ip config on one host (distinct ports) share its cores.
  std::map<std::string, int> machines_on_host;
  for (const auto& machine : machines) ++machines_on_host[host_of(machine[0])];
  std::vector<ProcessSpec> processes;
  for (std::size_t m = 0; m < machines.size(); ++m) {
    const std::string& first = machines[m][0];
    const std::string ip = host_of(first);
    const bool local = here.count(ip) > 0;
    std::vector<std::string> serve{self,
                                   "serve",
                                   "--part-config",
                                   launch.part_config,
                                   "--part",
                                   std::to_string(m),
                                   "--address",
                                   first,
                                   "--num-servers",
                                   std::to_string(launch.num_servers),
                                   "--cluster-id",
                                   launch.cluster_id,
                                   "--max-restarts",
                                   std::to_string(launch.max_restarts)};
    if (launch.token_file.empty()) {
      serve.push_back("--insecure");
    } else {
      serve.insert(serve.end(), {"--token-file", launch.token_file});
    }
    if (!launch.tls_cert.empty()) {
      serve.insert(serve.end(), {"--tls-cert", launch.tls_cert, "--tls-key", launch.tls_key});
    }
    serve.insert(serve.end(), {"--feature-storage", launch.server_feature_storage});
    if (!launch.server_cache_policy.empty()) {
      serve.insert(serve.end(), {"--cache-policy", launch.server_cache_policy, "--cache-size",
                                 launch.server_cache_size});
    }
    ProcessSpec server{
        .name = fmt::format("servers of machine {} ({})", m, ip), .argv = serve, .service = true};
    processes.push_back(on_machine(launch, ip, local, server));
    for (int t = 0; t < launch.num_trainers; ++t) {
      std::vector<std::string> argv = command;
      const ClusterOptions cluster = trainer_cluster(launch, m);
      if (graphloom_trainers) {
        if (argv[0] == "graphloom") argv[0] = self;
        const std::vector<std::string> flags = cluster.trainer_flags();
        argv.insert(argv.end(), flags.begin(), flags.end());
      }
      const int rank = static_cast<int>(m) * launch.num_trainers + t;
      ProcessSpec trainer{
          .name = fmt::format("trainer rank {} (machine {})", rank, m),
          .argv = argv,
          .environment = launch_variables({.rank = rank,
                                           .world_size = world,
                                           .local_rank = t,
                                           .local_world_size = launch.num_trainers,
                                           .master_addr = master_ip,
                                           .master_port = master_port},
                                          launch.num_trainers * machines_on_host[ip]),
          .in_process_group = true};
      trainer.environment.merge(cluster.environment_variables());
      trainer.environment["GRAPHLOOM_NUM_TRAINERS"] = std::to_string(launch.num_trainers);
      processes.push_back(on_machine(launch, ip, local, trainer));
    }
  }
  spdlog::info("launch: {} machine(s) x ({} server(s) + {} trainer(s)), rendezvous {}:{}",
               machines.size(), launch.num_servers, launch.num_trainers, master_ip, master_port);
  // Servers remove their segments on every exit they see; one killed with SIGKILL cannot, so
  // the launcher sweeps this machine's parts after any run (and before a guardian's restart).
  const auto remove_local_segments = [&] {
    for (std::size_t m = 0; m < machines.size(); ++m) {
      if (here.count(host_of(machines[m][0])) == 0) continue;
      if (const int removed =
              SharedPartition::remove_segments(launch.cluster_id, static_cast<int64_t>(m))) {
        spdlog::warn("launch: removed {} shared-memory segment(s) left by part {}'s servers",
                     removed, m);
      }
    }
  };
  const int code = run_processes(std::move(processes), {.max_restarts = launch.max_restarts,
                                                        .guard = true,
                                                        .before_restart = remove_local_segments});
  remove_local_segments();
  return code;
}

}  // namespace graphloom::distributed
