// Gloo's TCP pairs carry no credentials: whoever connects to a pair's listening socket first is
// taken for that peer. authenticate_peers makes every rank prove over each of its pairs that it
// holds the cluster token, so a process in a peer's place fails the job at start instead of
// joining its collectives (and sending it gradients). The proof covers the handshake, not the
// bytes after it: a process that can relay a pair's traffic is not stopped (Gloo's TLS transport
// is not in Debian's libgloo).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace c10d {
class Backend;
}

namespace graphloom::distributed {

// Point-to-point tags of the exchange; nothing else sends on the group before it ends.
inline constexpr int kPeerNonceTag = 0x61757468;
inline constexpr int kPeerProofTag = kPeerNonceTag + 1;

// Each rank sends every peer a fresh nonce and answers each peer's nonce with pair_proof over the
// same pair; a wrong answer throws an Error naming the peer's rank. `job_id` is the job's own
// (from the token-checked store): an answer obtained from another job on the same token does not
// pass. `context` ("rank 1 of 2 (rendezvous ...)") goes into messages. Every rank of `group`
// calls it before any other point-to-point traffic.
void authenticate_peers(c10d::Backend& group, const std::string& token, const std::string& job_id,
                        const std::string& context);

// HMAC-SHA256 under `token` of the job id, the asker's nonce and both ranks (each field
// length-prefixed): rank `from`'s answer to rank `to`'s nonce.
std::array<uint8_t, 32> pair_proof(const std::string& token, const std::string& job_id,
                                   const std::array<uint8_t, 32>& nonce, int from, int to);

}  // namespace graphloom::distributed
