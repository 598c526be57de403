// Challenge and answer over Gloo's own pairs: the answer binds the token to the asker's fresh
// nonce and to both ranks, so it cannot be replayed from another job or reflected back.
#include "peer_authentication.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

#include "graphloom/base/error.h"

namespace graphloom::dist {
namespace {

constexpr int64_t kNonceBytes = 32;
constexpr int64_t kProofBytes = 32;  // SHA-256
// Point-to-point tags of this exchange; nothing else sends on the group before it ends.
constexpr int kNonceTag = 0x61757468;
constexpr int kProofTag = kNonceTag + 1;

at::Tensor bytes(int64_t count) { return at::empty({count}, at::kByte); }

at::Tensor proof(const std::string& token, const at::Tensor& nonce, int from, int to) {
  std::string message = "graphloom gloo pair " + std::to_string(from) + "->" + std::to_string(to);
  message.append(reinterpret_cast<const char*>(nonce.data_ptr<uint8_t>()), kNonceBytes);
  at::Tensor out = bytes(kProofBytes);
  unsigned int length = 0;
  GL_CHECK(HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
                reinterpret_cast<const unsigned char*>(message.data()), message.size(),
                out.data_ptr<uint8_t>(), &length) != nullptr &&
               length == kProofBytes,
           "HMAC-SHA256 of a pair's nonce failed");
  return out;
}

// Sends `outgoing[peer]` to every peer and receives each peer's message into `incoming[peer]`.
void exchange(c10d::ProcessGroup& group, std::vector<at::Tensor>& outgoing,
              std::vector<at::Tensor>& incoming, int tag) {
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  for (int peer = 0; peer < group.getSize(); ++peer) {
    if (peer == group.getRank()) continue;
    std::vector<at::Tensor> into{incoming[peer]};
    works.push_back(group.recv(into, peer, tag));
    std::vector<at::Tensor> from{outgoing[peer]};
    works.push_back(group.send(from, peer, tag));
  }
  for (const auto& work : works) work->wait();
}

}  // namespace

void authenticate_peers(c10d::ProcessGroup& group, const std::string& token,
                        const std::string& context) {
  const int rank = group.getRank();
  const int world_size = group.getSize();
  at::Tensor nonce = bytes(kNonceBytes);
  GL_CHECK(RAND_bytes(nonce.data_ptr<uint8_t>(), kNonceBytes) == 1,
           "no random bytes for the pair nonce ({})", context);

  std::vector<at::Tensor> nonces_out(world_size, nonce);
  std::vector<at::Tensor> nonces_in(world_size);
  for (at::Tensor& in : nonces_in) in = bytes(kNonceBytes);
  exchange(group, nonces_out, nonces_in, kNonceTag);

  std::vector<at::Tensor> proofs_out(world_size);
  std::vector<at::Tensor> proofs_in(world_size);
  for (int peer = 0; peer < world_size; ++peer) {
    proofs_out[peer] = peer == rank ? bytes(0) : proof(token, nonces_in[peer], rank, peer);
    proofs_in[peer] = bytes(kProofBytes);
  }
  exchange(group, proofs_out, proofs_in, kProofTag);

  for (int peer = 0; peer < world_size; ++peer) {
    if (peer == rank) continue;
    const at::Tensor expected = proof(token, nonce, peer, rank);
    GL_CHECK(CRYPTO_memcmp(expected.data_ptr<uint8_t>(), proofs_in[peer].data_ptr<uint8_t>(),
                           kProofBytes) == 0,
             "{}: the process connected as rank {} did not prove the cluster token over its Gloo "
             "pair: it was given another token, or another process connected in its place",
             context, peer);
  }
}

}  // namespace graphloom::dist
