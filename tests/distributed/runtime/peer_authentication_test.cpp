// The Gloo pair handshake: ranks with the token pass it, and a rank without it is named by
// every peer it is paired with, whatever the order of the ranks.
#include "distributed/runtime/peer_authentication.h"

#include "distributed/runtime/gloo_backend.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <array>
#include <exception>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <vector>

namespace graphloom::distributed {
namespace {

// Connects `tokens.size()` ranks (threads) over an in-process store and runs the handshake with
// rank r holding tokens[r] and job id `job_ids[r]` (all "job" when empty); returns each rank's
// error message, "" where it passed.
std::vector<std::string> handshake(const std::vector<std::string>& tokens,
                                   std::vector<std::string> job_ids = {}) {
  if (job_ids.empty()) job_ids.assign(tokens.size(), "job");
  const int world_size = static_cast<int>(tokens.size());
  const auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(world_size);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < world_size; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        GlooBackendOptions options;
        options.timeout = std::chrono::seconds(20);
        options.hostname = "127.0.0.1";
        const auto group = make_gloo_backend(store, rank, world_size, options);
        authenticate_peers(*group, tokens[rank], job_ids[rank], "rank " + std::to_string(rank));
        // The pairs still carry collectives afterwards.
        std::vector<at::Tensor> sum{at::ones({2})};
        group->allreduce(sum)->wait();
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
  for (const int impostor : {0, 1, 2}) {
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

TEST(PeerAuthentication, AnAnswerFromAnotherJobOnTheSameTokenIsRefused) {
  const std::vector<std::string> errors = handshake({"token", "token"}, {"job-a", "job-b"});
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(errors[rank].find("did not prove the cluster token"), std::string::npos)
        << errors[rank];
  }
}

TEST(PeerAuthentication, TheProofCoversTokenJobNonceAndBothRanksInOrder) {
  std::array<uint8_t, 32> nonce{};
  nonce[0] = 1;
  std::array<uint8_t, 32> other_nonce = nonce;
  other_nonce[31] = 1;
  const auto proof = pair_proof("token", "job", nonce, 1, 2);
  EXPECT_EQ(proof, pair_proof("token", "job", nonce, 1, 2));
  EXPECT_NE(proof, pair_proof("token2", "job", nonce, 1, 2));
  EXPECT_NE(proof, pair_proof("token", "job2", nonce, 1, 2));
  EXPECT_NE(proof, pair_proof("token", "job", other_nonce, 1, 2));
  EXPECT_NE(proof, pair_proof("token", "job", nonce, 2, 1));  // reflected back to its asker
  EXPECT_NE(proof, pair_proof("token", "job", nonce, 1, 3));
  // Fields are length-prefixed: moving bytes between the token-free fields changes the proof.
  EXPECT_NE(pair_proof("t", "ab", nonce, 1, 2), pair_proof("t", "a", nonce, 1, 2));
}

}  // namespace
}  // namespace graphloom::distributed
