// The rendezvous store: c10d Store semantics over gRPC, the cluster token, and a listener on
// the given address only.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "distributed/dist_fixtures.h"
#include "distributed/runtime/rendezvous_store.h"
#include "graphloom/base/error.h"
#include "graphloom/distributed/runtime/process_group.h"
#include "support/test_support.h"

namespace graphloom::distributed {
namespace {

using testing::error_of;
using namespace std::chrono_literals;

std::vector<uint8_t> bytes(const std::string& text) { return {text.begin(), text.end()}; }

std::string address_of(const RendezvousStoreServer& server) {
  return fmt::format("127.0.0.1:{}", server.port());
}

TEST(RendezvousStore, BehavesAsAC10dStore) {
  const RendezvousStoreServer server("127.0.0.1:0", "secret");
  RendezvousStore store(address_of(server), "secret", 5s);
  store.set("a", bytes("one"));
  EXPECT_EQ(store.get("a"), bytes("one"));
  EXPECT_EQ(store.add("n", 10), 10);
  EXPECT_EQ(store.add("n", 5), 15);
  EXPECT_EQ(store.get("n"), bytes("15"));  // counters are decimal text, as in TCPStore
  EXPECT_TRUE(store.check({"a", "n"}));
  EXPECT_FALSE(store.check({"a", "missing"}));
  EXPECT_EQ(store.getNumKeys(), 2);
  // compareSet: swaps only on a match; a missing key is set only when nothing is expected.
  EXPECT_EQ(store.compareSet("a", bytes("two"), bytes("three")), bytes("one"));
  EXPECT_EQ(store.compareSet("a", bytes("one"), bytes("three")), bytes("three"));
  EXPECT_EQ(store.compareSet("b", {}, bytes("new")), bytes("new"));
  EXPECT_EQ(store.compareSet("c", bytes("x"), bytes("y")), bytes("x"));
  EXPECT_FALSE(store.check({"c"}));
  EXPECT_TRUE(store.deleteKey("b"));
  EXPECT_FALSE(store.deleteKey("b"));
  // get() and wait() wait for a key another process sets later.
  std::thread later([&] {
    std::this_thread::sleep_for(200ms);
    RendezvousStore(address_of(server), "secret", 5s).set("late", bytes("here"));
  });
  store.wait({"late"});
  EXPECT_EQ(store.get("late"), bytes("here"));
  later.join();
}

TEST(RendezvousStore, MissingKeyTimesOutNamingIt) {
  const RendezvousStoreServer server("127.0.0.1:0", "");
  RendezvousStore store(address_of(server), "", 300ms);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_of([&] { store.get("never"); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_NE(message.find("'never'"), std::string::npos) << message;
  EXPECT_NE(message.find("timed out"), std::string::npos) << message;
  EXPECT_NE(error_of([&] { store.wait({"k1", "k2"}, 200ms); }).find("k1, k2"), std::string::npos);
}

TEST(RendezvousStore, WrongOrMissingTokenIsRefused) {
  const RendezvousStoreServer server("127.0.0.1:0", "secret");
  for (const std::string token : {"wrong", ""}) {
    RendezvousStore store(address_of(server), token, 2s);
    const std::string message = error_of([&] { store.set("k", bytes("v")); });
    EXPECT_NE(message.find("cluster token"), std::string::npos) << message;
  }
  RendezvousStore store(address_of(server), "secret", 2s);
  EXPECT_FALSE(store.check({"k"}));  // nothing was written by the refused calls
}

// The local addresses (the kernel's hex) of the sockets listening on `port`, IPv4 and IPv6.
std::vector<std::string> listeners_of(int port) {
  std::vector<std::string> found;
  const std::string suffix = fmt::format(":{:04X}", port);
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream tcp(table);
    std::string line;
    std::getline(tcp, line);  // header
    while (std::getline(tcp, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state == "0A" && local.size() > suffix.size() &&
          local.compare(local.size() - suffix.size(), suffix.size(), suffix) == 0) {
        found.push_back(local.substr(0, local.size() - suffix.size()));
      }
    }
  }
  return found;
}

TEST(RendezvousStore, ListensOnlyOnTheGivenAddress) {
  const RendezvousStoreServer server("127.0.0.1:0", "secret");
  // 127.0.0.1, on an IPv4 socket or as the v4-mapped ::ffff:127.0.0.1 (gRPC's choice), never
  // the wildcard address.
  const std::vector<std::string> listeners = listeners_of(server.port());
  ASSERT_EQ(listeners.size(), 1u);
  EXPECT_TRUE(listeners[0] == "0100007F" || listeners[0] == "0000000000000000FFFF00000100007F")
      << listeners[0];
}

TEST(RendezvousStore, ASecondStoreOnAPortInUseFailsInsteadOfSharingIt) {
  const RendezvousStoreServer first("127.0.0.1:0", "secret");
  const std::string message =
      error_of([&] { RendezvousStoreServer second(address_of(first), "secret"); });
  EXPECT_NE(message.find(fmt::format("port {}", first.port())), std::string::npos) << message;
  EXPECT_NE(message.find("in use"), std::string::npos) << message;
}

TEST(RendezvousStore, ShuttingDownEndsWaitingCallsAtOnce) {
  auto server = std::make_unique<RendezvousStoreServer>("127.0.0.1:0", "");
  const std::string address = address_of(*server);
  std::string message;
  std::thread waiter([&] {
    RendezvousStore store(address, "", 60s);
    message = error_of([&] { store.get("never"); });
  });
  std::this_thread::sleep_for(200ms);
  const auto start = std::chrono::steady_clock::now();
  server.reset();
  waiter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_NE(message.find("shutting down"), std::string::npos) << message;
}

// Connects `world` ranks (threads) with the given tokens; returns each rank's error ("" when
// it joined).
std::vector<std::string> connect_ranks(const std::vector<std::string>& tokens) {
  const int world = static_cast<int>(tokens.size());
  const int port = find_free_port();
  std::vector<std::string> errors(world);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < world; ++rank) {
    ranks.emplace_back([&, rank] {
      ProcessEnvironment env;
      env.rank = rank;
      env.world_size = world;
      env.master_port = port;
      errors[rank] = error_of([&] {
        const auto group = ProcessGroup::connect(env, {.timeout = 3s, .token = tokens[rank]});
        group->barrier();
      });
    });
  }
  for (std::thread& rank : ranks) rank.join();
  return errors;
}

TEST(RendezvousStore, ProcessGroupsJoinWithTheTokenAndNotWithout) {
  // Ranks holding the job's token form a group and run a collective.
  EXPECT_EQ(connect_ranks({"job-token", "job-token"}), (std::vector<std::string>{"", ""}));
  const int port = find_free_port();
  std::string joined_error;
  std::thread owner([&] {
    ProcessEnvironment env;
    env.world_size = 2;
    env.master_port = port;
    joined_error = error_of([&] { ProcessGroup::connect(env, {.timeout = 3s, .token = "a"}); });
  });
  ProcessEnvironment env;
  env.rank = 1;
  env.world_size = 2;
  env.master_port = port;
  const std::string message =
      error_of([&] { ProcessGroup::connect(env, {.timeout = 3s, .token = "b"}); });
  owner.join();
  EXPECT_NE(message.find("cluster token"), std::string::npos) << message;
  EXPECT_FALSE(joined_error.empty());  // rank 0 gave up waiting for rank 1
}

}  // namespace
}  // namespace graphloom::distributed
