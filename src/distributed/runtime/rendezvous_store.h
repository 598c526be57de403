// The trainers' rendezvous store over gRPC (proto/rendezvous_store.proto) instead of c10d's
// TCPStore, which listens on every interface and lets anyone who reaches its port read and
// write the rendezvous (Gloo's peer addresses among it). Rank 0 serves it on
// MASTER_ADDR:MASTER_PORT only; with a cluster token, calls without it are refused.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace graphloom::distributed {

class RendezvousStoreServer {
 public:
  // Listens on `address` ("host:port"); throws graphloom::Error when it cannot be bound. An
  // empty `token` accepts every caller.
  RendezvousStoreServer(const std::string& address, std::string token);
  ~RendezvousStoreServer();  // wakes waiting calls, then shuts down
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A c10d::Store whose operations are calls to a RendezvousStoreServer. Calls wait up to the
// store's timeout for the server to come up; get() and wait() wait for missing keys as long.
class RendezvousStore : public c10d::Store {
 public:
  RendezvousStore(std::string address, std::string token, std::chrono::milliseconds timeout);
  ~RendezvousStore() override;

  // Another client of the same server (c10d asks for one per thread that uses a store).
  c10::intrusive_ptr<c10d::Store> clone() override;

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  std::vector<uint8_t> compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                  const std::vector<uint8_t>& desired) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  bool deleteKey(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t getNumKeys() override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// c10d::Store values are bytes; the rendezvous keeps strings (addresses, ids) in them.
inline std::vector<uint8_t> to_store_value(const std::string& text) {
  return {text.begin(), text.end()};
}
inline std::string from_store_value(const std::vector<uint8_t>& value) {
  return {value.begin(), value.end()};
}

}  // namespace graphloom::distributed
