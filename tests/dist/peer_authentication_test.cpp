// The Gloo pair handshake: ranks with the token pass it, and a rank without it is named by
// every peer it is paired with, whatever the order of the ranks.
#include "dist/peer_authentication.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <exception>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

namespace graphloom::dist {
namespace {

// Connects `tokens.size()` ranks (threads) over an in-process store and runs the handshake with
// rank r holding tokens[r]; returns each rank's error message, "" where it passed.
std::vector<std::string> handshake(const std::vector<std::string>& tokens) {
  const int world_size = static_cast<int>(tokens.size());
  const auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(world_size);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < world_size; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(20));
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
        c10d::ProcessGroupGloo group(store, rank, world_size, options);
        authenticate_peers(group, tokens[rank], "rank " + std::to_string(rank));
        // The pairs still carry collectives afterwards.
        std::vector<at::Tensor> sum{at::ones({2})};
        group.allreduce(sum)->wait();
        EXPECT_EQ(sum[0][0].item<float>(), world_size);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  return errors;
}

TEST(PeerAuthentication, RanksHoldingTheTokenPass) {
  for (const std::string& error : handshake({"token", "token", "token"})) EXPECT_EQ(error, "");
}

TEST(PeerAuthentication, EveryPeerNamesTheRankWithoutTheToken) {
  for (const int impostor : {0, 2}) {  // the listening side of its pairs, and the connecting side
    std::vector<std::string> tokens(3, "token");
    tokens[impostor] = "guess";
    const std::vector<std::string> errors = handshake(tokens);
    for (int rank = 0; rank < 3; ++rank) {
      SCOPED_TRACE("impostor " + std::to_string(impostor) + ", rank " + std::to_string(rank));
      if (rank == impostor) {
        // It sees every honest peer's answer as wrong for its own token.
        EXPECT_NE(errors[rank].find("did not prove the cluster token"), std::string::npos);
      } else {
        EXPECT_NE(errors[rank].find("rank " + std::to_string(rank) +
                                    ": the process connected as "
                                    "rank " +
                                    std::to_string(impostor)),
                  std::string::npos)
            << errors[rank];
      }
    }
  }
}

}  // namespace
}  // namespace graphloom::dist
