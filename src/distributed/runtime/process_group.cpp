// ProcessGroup: c10d Gloo + TCPStore behind a small interface, with libtorch's exceptions turned
// into graphloom errors that name the operation, the rank and the rendezvous address.
#include "graphloom/distributed/runtime/process_group.h"

#include <arpa/inet.h>
#include <c10/util/Exception.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "gloo_backend.h"
#include "nccl_backend.h"
#include "peer_authentication.h"
#include "rendezvous_store.h"

#include "graphloom/base/error.h"
#include "graphloom/base/shared_memory.h"

namespace graphloom::distributed {
namespace {

std::string message_of(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    return c10_error->what_without_backtrace();
  }
  return e.what();
}

// Runs `fn`, turning any exception into a graphloom::Error that says what was being done.
template <typename Fn>
auto guarded(const std::string& what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(fmt::format("{} failed: {}", what, message_of(e)));
  }
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// This machine's address on the route to `host` (an IPv4 literal or name), "" when there is
// none: a UDP connect sends nothing, it only makes the kernel choose the source address.
std::string address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return "";
  std::string address;
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in local{};
  socklen_t size = sizeof(local);
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &size) == 0) {
    char text[INET_ADDRSTRLEN] = {};
    if (::inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text)) != nullptr) address = text;
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return address;
}

// Where this rank's Gloo sockets listen.
GlooBackendOptions gloo_options_for(const ProcessEnvironment& env,
                                    const ProcessGroupOptions& options) {
  GlooBackendOptions gloo;
  gloo.timeout = options.timeout;
  gloo.threads = options.gloo_threads;
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface) {
    gloo.interface = interface;
  } else if (is_loopback(env.master_addr)) {
    // A loopback rendezvous means a single-machine job: keep Gloo's sockets on loopback too.
    gloo.hostname = "127.0.0.1";
  } else {
    // Otherwise the address that reaches the master, not what the host name resolves to: on
    // Debian that is often 127.0.1.1 (/etc/hosts), and peers then dial their own loopback.
    // Empty when there is no route: Gloo's default device.
    gloo.hostname = address_towards(env.master_addr, env.master_port);
  }
  return gloo;
}

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

std::string random_id() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}", device(), device());
}

c10d::ReduceOp to_c10d(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin:
      return c10d::ReduceOp::MIN;
    case ReduceOp::kMax:
      return c10d::ReduceOp::MAX;
    case ReduceOp::kSum:
      break;
  }
  return c10d::ReduceOp::SUM;
}

}  // namespace

struct ProcessGroup::Impl {
  std::unique_ptr<RendezvousStoreServer> store_server;  // rank 0; destroyed last
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> gloo;
  GlooBackendOptions gloo_options;
  // attach_device: the device whose tensors take `device_backend` ("nccl" or "gloo (device)").
  std::optional<c10::Device> device;
  c10::intrusive_ptr<c10d::Backend> device_backend;
  std::string device_backend_name;
  std::string context;  // "rank 1 of 2 (rendezvous 127.0.0.1:29500)" for messages

  c10d::Backend& backend_for(const at::Tensor& tensor) const {
    return device && tensor.device() == *device ? *device_backend : *gloo;
  }

  void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) const {
    guarded(
        fmt::format("{} on {} (a peer process exited, or did not answer in time)", what, context),
        [&] { work->wait(); });
  }
};

ProcessGroup::ProcessGroup(ProcessEnvironment env)
    : env_(std::move(env)), impl_(std::make_unique<Impl>()) {}
ProcessGroup::~ProcessGroup() = default;

std::unique_ptr<ProcessGroup> ProcessGroup::connect(const ProcessEnvironment& env,
                                                    const ProcessGroupOptions& options) {
  GL_CHECK(env.world_size >= 1 && env.rank >= 0 && env.rank < env.world_size,
           "invalid rank {} for world size {}", env.rank, env.world_size);
  std::unique_ptr<ProcessGroup> group(new ProcessGroup(env));
  Impl& impl = *group->impl_;
  const std::string address = fmt::format("{}:{}", env.master_addr, env.master_port);
  impl.context = fmt::format("rank {} of {} (rendezvous {})", env.rank, env.world_size, address);

  if (env.launcher_hosts_store) {
    // torchrun's agent hosts a TCPStore: join it (its security is torchrun's).
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<std::uint16_t>(env.master_port);
    store_options.numWorkers = static_cast<std::size_t>(env.world_size);
    store_options.waitWorkers = false;  // the Gloo rendezvous below waits for everyone
    store_options.timeout = options.timeout;
    impl.store =
        guarded(fmt::format("rank {} reaching the launcher's rendezvous store at {} (MASTER_ADDR/"
                            "MASTER_PORT)",
                            env.rank, address),
                [&]() -> c10::intrusive_ptr<c10d::Store> {
                  auto store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
                  return c10::make_intrusive<c10d::PrefixStore>(env.store_prefix, store);
                });
  } else {
    if (env.rank == 0 && env.local_world_size < env.world_size && !is_loopback(env.master_addr)) {
      // Other machines must reach this address; on Debian a host name often resolves to
      // 127.0.1.1 on its own machine (/etc/hosts), which they cannot.
      const std::string local = address_towards(env.master_addr, env.master_port);
      GL_CHECK(local.rfind("127.", 0) != 0,
               "MASTER_ADDR '{}' is a loopback address ({}) on rank 0's machine, but the job "
               "spans machines ({} of its {} ranks run here): set MASTER_ADDR to an address of "
               "rank 0 that the other machines reach",
               env.master_addr, local, env.local_world_size, env.world_size);
    }
    if (env.rank == 0) {
      if (options.token.empty()) {
        spdlog::warn(
            "the rendezvous store on {} has no cluster token: any process that reaches it can "
            "join (give --token-file or GRAPHLOOM_TOKEN)",
            address);
      }
      impl.store_server = guarded(
          fmt::format("starting the rendezvous store on {} (MASTER_ADDR:MASTER_PORT)", address),
          [&] { return std::make_unique<RendezvousStoreServer>(address, options.token); });
    }
    impl.store = c10::make_intrusive<RendezvousStore>(address, options.token, options.timeout);
  }

  impl.gloo_options = gloo_options_for(env, options);
  impl.gloo = guarded(
      fmt::format("connecting the trainers' process group ({})", impl.context),
      [&] { return make_gloo_backend(impl.store, env.rank, env.world_size, impl.gloo_options); });

  // Agree on a job id and on whether every rank shares this machine.
  guarded(fmt::format("exchanging job facts ({})", impl.context), [&] {
    if (env.rank == 0) impl.store->set("graphloom/job_id", to_store_value(random_id()));
    impl.store->set(fmt::format("graphloom/host/{}", env.rank), to_store_value(host_name()));
    group->job_id_ = from_store_value(impl.store->get("graphloom/job_id"));
    const std::string mine = host_name();
    for (int r = 0; r < env.world_size; ++r) {
      if (from_store_value(impl.store->get(fmt::format("graphloom/host/{}", r))) != mine) {
        group->single_host_ = false;
      }
    }
  });
  if (!options.token.empty()) {
    guarded(fmt::format("authenticating the trainers' Gloo pairs ({})", impl.context),
            [&] { authenticate_peers(*impl.gloo, options.token, group->job_id_, impl.context); });
  }
  return group;
}

void ProcessGroup::allreduce(at::Tensor& tensor, ReduceOp op) {
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = to_c10d(op);
  impl_->wait(impl_->backend_for(tensor).allreduce(tensors, options), "allreduce");
}

CollectiveWork ProcessGroup::allreduce_async(at::Tensor tensor) {
  c10d::Backend& backend = impl_->backend_for(tensor);
  std::vector<at::Tensor> tensors{std::move(tensor)};
  c10::intrusive_ptr<c10d::Work> work = backend.allreduce(tensors);
  return CollectiveWork([impl = impl_.get(), work] { impl->wait(work, "gradient allreduce"); });
}

void ProcessGroup::broadcast(at::Tensor& tensor, int root) {
  std::vector<at::Tensor> tensors{tensor};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  impl_->wait(impl_->backend_for(tensor).broadcast(tensors, options), "broadcast");
}

void ProcessGroup::barrier() { impl_->wait(impl_->gloo->barrier(), "barrier"); }

void ProcessGroup::attach_device(c10::Device device, DeviceBackend backend,
                                 const std::string& option) {
  Impl& impl = *impl_;
  const std::string name = backend == DeviceBackend::kNccl ? "nccl" : "gloo (device)";
  if (impl.device) {
    // A second synchronizer of the same run (every rank does the same): the backend is there.
    GL_CHECK(*impl.device == device && impl.device_backend_name == name,
             "{}: {} on {} asked for, but {} on {} is attached already", option, name, device.str(),
             impl.device_backend_name, impl.device->str());
    return;
  }
  // Its own key space in the store: its rendezvous must not meet the group's Gloo keys.
  auto store = c10::make_intrusive<c10d::PrefixStore>("graphloom/device", impl.store);
  impl.device_backend = guarded(
      fmt::format("connecting the {} backend for {} tensors ({})", name, device.str(),
                  impl.context),
      [&]() -> c10::intrusive_ptr<c10d::Backend> {
        if (backend == DeviceBackend::kNccl) {
          return make_nccl_backend(store, rank(), world_size(), impl.gloo_options.timeout, option);
        }
        return make_gloo_backend(store, rank(), world_size(), impl.gloo_options);
      });
  impl.device = device;
  impl.device_backend_name = name;
}

std::string ProcessGroup::backend_name(const at::Tensor& tensor) const {
  return impl_->device && tensor.device() == *impl_->device ? impl_->device_backend_name : "gloo";
}

at::Tensor ProcessGroup::shared_tensor(const std::string& tag, at::IntArrayRef sizes,
                                       at::ScalarType dtype) {
  GL_CHECK(single_host_, "shared tensor '{}' needs every rank on one machine", tag);
  const std::string name = fmt::format("graphloom-{}-{}", job_id_, tag);
  int64_t numel = 1;
  for (const int64_t size : sizes) numel *= size;
  const std::size_t bytes = static_cast<std::size_t>(numel) * c10::elementSize(dtype);
  std::shared_ptr<SharedMemorySegment> segment;
  if (rank() == 0) segment = SharedMemorySegment::create(name, std::max<std::size_t>(bytes, 1));
  barrier();
  if (rank() != 0) segment = SharedMemorySegment::open(name);
  barrier();
  if (rank() == 0) {
    SharedMemorySegment::remove(name);  // every rank has it mapped; the memory stays
    segment->release_ownership();
  }
  GL_CHECK(segment->size() >= bytes, "shared tensor '{}': segment has {} bytes, expected {}", tag,
           segment->size(), bytes);
  return at::from_blob(
      segment->data(), sizes, [segment](void*) mutable { segment.reset(); },
      at::TensorOptions().dtype(dtype));
}

std::pair<int64_t, int64_t> rank_share(int64_t count, int rank, int world_size) {
  return {count * rank / world_size, count * (rank + 1) / world_size};
}

int find_free_port(const std::string& host) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  GL_CHECK(fd >= 0, "cannot create a socket: {}", std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  GL_CHECK(::inet_pton(AF_INET, host.c_str(), &address.sin_addr) == 1,
           "'{}' is not an IPv4 address", host);
  socklen_t length = sizeof(address);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int saved = errno;
  ::close(fd);
  GL_CHECK(ok, "cannot find a free port on {}: {}", host, std::strerror(saved));
  return ntohs(address.sin_port);
}

}  // namespace graphloom::distributed
