// The rendezvous store: a map of keys to bytes behind one mutex, with waits on a condition
// variable; the client maps c10d's Store calls onto it.
#include "rendezvous_store.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <map>
#include <mutex>

#include "graphloom/base/error.h"
#include "graphloom/distributed/rpc/authorization.h"
#include "graphloom_proto/rendezvous_store.grpc.pb.h"

namespace graphloom::distributed {
namespace {

// Longest wait a request may ask for: c10d's kNoTimeout (0) means "forever".
constexpr int64_t kLongestWaitMs = int64_t{24} * 3600 * 1000;
// Keys and values are small (addresses, ids); both ends allow this much.
constexpr int kMaxMessageBytes = 16 << 20;

int64_t wait_ms(std::chrono::milliseconds timeout) {
  return timeout.count() <= 0 ? kLongestWaitMs : std::min(timeout.count(), kLongestWaitMs);
}

}  // namespace

// Outside the anonymous namespace because RendezvousStoreServer::Impl holds one.
class StoreService final : public rpc::RendezvousStore::Service {
 public:
  explicit StoreService(std::string token) : token_(std::move(token)) {}

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
  }

  grpc::Status Set(grpc::ServerContext* context, const rpc::StoreRequest* request,
                   rpc::StoreResponse*) override {
    return handle(context, [&](std::unique_lock<std::mutex>&) {
      values_[request->key()] = request->value();
      changed_.notify_all();
      return grpc::Status::OK;
    });
  }

  grpc::Status Get(grpc::ServerContext* context, const rpc::StoreRequest* request,
                   rpc::StoreResponse* response) override {
    return handle(context, [&](std::unique_lock<std::mutex>& lock) {
      if (grpc::Status waited = wait_for(lock, {request->key()}, request->timeout_ms());
          !waited.ok()) {
        return waited;
      }
      response->set_value(values_.at(request->key()));
      return grpc::Status::OK;
    });
  }

  grpc::Status Add(grpc::ServerContext* context, const rpc::StoreRequest* request,
                   rpc::StoreResponse* response) override {
    return handle(context, [&](std::unique_lock<std::mutex>&) {
      // Counters are decimal text, as in c10d's TCPStore, so get() reads them the same way.
      std::string& value = values_[request->key()];
      int64_t number = 0;
      if (!value.empty()) {
        try {
          number = std::stoll(value);
        } catch (const std::exception&) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "add to key '" + request->key() + "', which holds no number");
        }
      }
      number += request->amount();
      value = std::to_string(number);
      response->set_number(number);
      changed_.notify_all();
      return grpc::Status::OK;
    });
  }

  grpc::Status CompareSet(grpc::ServerContext* context, const rpc::StoreRequest* request,
                          rpc::StoreResponse* response) override {
    return handle(context, [&](std::unique_lock<std::mutex>&) {
      // TCPStore's rule: a missing key is set only when the expected value is empty.
      const auto it = values_.find(request->key());
      if (it == values_.end()) {
        if (request->expected().empty()) values_[request->key()] = request->value();
        response->set_value(request->expected().empty() ? request->value() : request->expected());
      } else {
        if (it->second == request->expected()) it->second = request->value();
        response->set_value(it->second);
      }
      changed_.notify_all();
      return grpc::Status::OK;
    });
  }

  grpc::Status Check(grpc::ServerContext* context, const rpc::StoreRequest* request,
                     rpc::StoreResponse* response) override {
    return handle(context, [&](std::unique_lock<std::mutex>&) {
      bool all = true;
      for (const std::string& key : request->keys()) all = all && values_.count(key) > 0;
      response->set_flag(all);
      return grpc::Status::OK;
    });
  }

  grpc::Status Wait(grpc::ServerContext* context, const rpc::StoreRequest* request,
                    rpc::StoreResponse*) override {
    return handle(context, [&](std::unique_lock<std::mutex>& lock) {
      const std::vector<std::string> keys(request->keys().begin(), request->keys().end());
      return wait_for(lock, keys, request->timeout_ms());
    });
  }

  grpc::Status DeleteKey(grpc::ServerContext* context, const rpc::StoreRequest* request,
                         rpc::StoreResponse* response) override {
    return handle(context, [&](std::unique_lock<std::mutex>&) {
      response->set_flag(values_.erase(request->key()) > 0);
      return grpc::Status::OK;
    });
  }

  grpc::Status NumKeys(grpc::ServerContext* context, const rpc::StoreRequest*,
                       rpc::StoreResponse* response) override {
    return handle(context, [&](std::unique_lock<std::mutex>&) {
      response->set_number(static_cast<int64_t>(values_.size()));
      return grpc::Status::OK;
    });
  }

 private:
  template <typename Body>
  grpc::Status handle(grpc::ServerContext* context, Body&& body) {
    if (!token_.empty()) {
      bool found = false;
      if (!carries_token(*context, token_, &found)) {
        spdlog::warn("rendezvous store: call from {} refused: {} cluster token", context->peer(),
                     found ? "wrong" : "missing");
        return {grpc::StatusCode::UNAUTHENTICATED, "missing or wrong cluster token"};
      }
    }
    std::unique_lock lock(mutex_);
    if (stopping_) return {grpc::StatusCode::UNAVAILABLE, "the rendezvous store is shutting down"};
    return body(lock);
  }

  // OK once every key is present; DEADLINE_EXCEEDED when `timeout_ms` passes first,
  // UNAVAILABLE when the store shuts down meanwhile (rank 0 is exiting).
  grpc::Status wait_for(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                        int64_t timeout_ms) {
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(std::clamp<int64_t>(timeout_ms, 0, kLongestWaitMs));
    const bool present = changed_.wait_until(lock, deadline, [&] {
      if (stopping_) return true;
      for (const std::string& key : keys) {
        if (values_.count(key) == 0) return false;
      }
      return true;
    });
    if (stopping_) return {grpc::StatusCode::UNAVAILABLE, "the rendezvous store is shutting down"};
    if (!present) return {grpc::StatusCode::DEADLINE_EXCEEDED, "not set in time"};
    return grpc::Status::OK;
  }

  const std::string token_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
  bool stopping_ = false;
};

struct RendezvousStoreServer::Impl {
  std::unique_ptr<StoreService> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

RendezvousStoreServer::RendezvousStoreServer(const std::string& address, std::string token)
    : impl_(std::make_unique<Impl>()) {
  impl_->service = std::make_unique<StoreService>(std::move(token));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &impl_->port);
  // gRPC would share a port with another process that also asks for SO_REUSEPORT, such as a
  // second job's store on the same MASTER_PORT: the kernel would split the ranks between them.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(impl_->service.get());
  impl_->server = builder.BuildAndStart();
  const std::size_t colon = address.rfind(':');
  GL_CHECK(impl_->server != nullptr && impl_->port > 0,
           "cannot listen on {} for the rendezvous store: port {} (MASTER_PORT) is in use, or "
           "{} (MASTER_ADDR) is not an address of this machine",
           address, address.substr(colon + 1), address.substr(0, colon));
}

RendezvousStoreServer::~RendezvousStoreServer() {
  impl_->service->stop();  // waiting calls return, so that Shutdown does not wait for them
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

int RendezvousStoreServer::port() const { return impl_->port; }

struct RendezvousStore::Impl {
  std::string address;
  std::string token;
  std::unique_ptr<rpc::RendezvousStore::Stub> stub;

  // One call; `wait` is how long the server may wait for keys, on top of reaching it.
  template <typename Method>
  rpc::StoreResponse call(const char* what, Method method, const rpc::StoreRequest& request,
                          std::chrono::milliseconds reach, int64_t wait = 0) const {
    grpc::ClientContext context;
    context.set_wait_for_ready(true);  // rank 0 may not be listening yet
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(wait_ms(reach) + wait));
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    rpc::StoreResponse response;
    const grpc::Status status = (stub.get()->*method)(&context, request, &response);
    if (!status.ok()) {
      const std::string subject =
          request.key().empty() ? std::string() : fmt::format(" of key '{}'", request.key());
      GL_THROW("rendezvous store at {}: {}{} failed: {} ({})", address, what, subject,
               status.error_message(),
               status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? "timed out"
               : status.error_code() == grpc::StatusCode::UNAUTHENTICATED
                   ? "this process lacks the job's cluster token"
                   : "rank 0 exited, or is not running or reachable");
    }
    return response;
  }
};

RendezvousStore::RendezvousStore(std::string address, std::string token,
                                 std::chrono::milliseconds timeout)
    : c10d::Store(timeout), impl_(std::make_unique<Impl>()) {
  impl_->address = std::move(address);
  impl_->token = std::move(token);
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxMessageBytes);
  arguments.SetMaxSendMessageSize(kMaxMessageBytes);
  impl_->stub = rpc::RendezvousStore::NewStub(
      grpc::CreateCustomChannel(impl_->address, grpc::InsecureChannelCredentials(), arguments));
}

RendezvousStore::~RendezvousStore() = default;

c10::intrusive_ptr<c10d::Store> RendezvousStore::clone() {
  return c10::make_intrusive<RendezvousStore>(impl_->address, impl_->token, timeout_);
}

void RendezvousStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  rpc::StoreRequest request;
  request.set_key(key);
  request.set_value(from_store_value(value));
  impl_->call("set", &rpc::RendezvousStore::Stub::Set, request, timeout_);
}

std::vector<uint8_t> RendezvousStore::compareSet(const std::string& key,
                                                 const std::vector<uint8_t>& expected,
                                                 const std::vector<uint8_t>& desired) {
  rpc::StoreRequest request;
  request.set_key(key);
  request.set_expected(from_store_value(expected));
  request.set_value(from_store_value(desired));
  return to_store_value(
      impl_->call("compareSet", &rpc::RendezvousStore::Stub::CompareSet, request, timeout_)
          .value());
}

std::vector<uint8_t> RendezvousStore::get(const std::string& key) {
  rpc::StoreRequest request;
  request.set_key(key);
  request.set_timeout_ms(wait_ms(timeout_));
  return to_store_value(
      impl_->call("get", &rpc::RendezvousStore::Stub::Get, request, timeout_, request.timeout_ms())
          .value());
}

int64_t RendezvousStore::add(const std::string& key, int64_t amount) {
  rpc::StoreRequest request;
  request.set_key(key);
  request.set_amount(amount);
  return impl_->call("add", &rpc::RendezvousStore::Stub::Add, request, timeout_).number();
}

bool RendezvousStore::deleteKey(const std::string& key) {
  rpc::StoreRequest request;
  request.set_key(key);
  return impl_->call("deleteKey", &rpc::RendezvousStore::Stub::DeleteKey, request, timeout_).flag();
}

bool RendezvousStore::check(const std::vector<std::string>& keys) {
  rpc::StoreRequest request;
  for (const std::string& key : keys) request.add_keys(key);
  return impl_->call("check", &rpc::RendezvousStore::Stub::Check, request, timeout_).flag();
}

int64_t RendezvousStore::getNumKeys() {
  return impl_
      ->call("getNumKeys", &rpc::RendezvousStore::Stub::NumKeys, rpc::StoreRequest(), timeout_)
      .number();
}

void RendezvousStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void RendezvousStore::wait(const std::vector<std::string>& keys,
                           const std::chrono::milliseconds& timeout) {
  rpc::StoreRequest request;
  for (const std::string& key : keys) request.add_keys(key);
  request.set_timeout_ms(wait_ms(timeout));
  try {
    impl_->call("wait", &rpc::RendezvousStore::Stub::Wait, request, timeout_, request.timeout_ms());
  } catch (const Error& e) {
    GL_THROW("{} (waiting for {})", e.what(), fmt::join(keys, ", "));
  }
}

}  // namespace graphloom::distributed
