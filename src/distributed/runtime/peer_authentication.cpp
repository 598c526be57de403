// Challenge and answer over Gloo's own pairs: the answer binds the token to the asker's fresh
// nonce, to both ranks and to the job, so it cannot be replayed, reflected back to its asker, or
// fetched from another job that shares the token.
#include "peer_authentication.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <ATen/ATen.h>
#include <cstring>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <vector>

#include "graphloom/base/error.h"

namespace graphloom::distributed {
namespace {

using Bytes32 = std::array<uint8_t, 32>;

// Zero-filled: Gloo accepts a message shorter than the buffer it lands in.
at::Tensor buffer() { return at::zeros({32}, at::kByte); }

at::Tensor as_tensor(const Bytes32& bytes) {
  at::Tensor out = buffer();
  std::memcpy(out.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  return out;
}

Bytes32 as_bytes(const at::Tensor& tensor) {
  Bytes32 out;
  std::memcpy(out.data(), tensor.data_ptr<uint8_t>(), out.size());
  return out;
}

void append_field(std::string& message, const void* data, std::size_t size) {
  const uint64_t length = size;
  message.append(reinterpret_cast<const char*>(&length), sizeof(length));
  message.append(static_cast<const char*>(data), size);
}

// Sends `outgoing[peer]` to every peer and receives each peer's message into `incoming[peer]`.
void exchange(c10d::Backend& group, std::vector<at::Tensor>& outgoing,
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

Bytes32 pair_proof(const std::string& token, const std::string& job_id, const Bytes32& nonce,
                   int from, int to) {
  std::string message = "graphloom gloo pair";
  append_field(message, job_id.data(), job_id.size());
  append_field(message, nonce.data(), nonce.size());
  const int32_t ranks[2] = {from, to};
  append_field(message, ranks, sizeof(ranks));
  Bytes32 out;
  unsigned int length = 0;
  GL_CHECK(HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
                reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(),
                &length) != nullptr &&
               length == out.size(),
           "HMAC-SHA256 of a pair's nonce failed");
  return out;
}

void authenticate_peers(c10d::Backend& group, const std::string& token, const std::string& job_id,
                        const std::string& context) {
  const int rank = group.getRank();
  const int world_size = group.getSize();
  Bytes32 nonce;
  GL_CHECK(RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) == 1,
           "no random bytes for the pair nonce ({})", context);

  std::vector<at::Tensor> nonces_out(world_size, as_tensor(nonce));
  std::vector<at::Tensor> nonces_in(world_size);
  for (at::Tensor& in : nonces_in) in = buffer();
  exchange(group, nonces_out, nonces_in, kPeerNonceTag);

  std::vector<at::Tensor> proofs_out(world_size);
  std::vector<at::Tensor> proofs_in(world_size);
  for (int peer = 0; peer < world_size; ++peer) {
    proofs_in[peer] = buffer();
    proofs_out[peer] =
        peer == rank ? buffer()
                     : as_tensor(pair_proof(token, job_id, as_bytes(nonces_in[peer]), rank, peer));
  }
  exchange(group, proofs_out, proofs_in, kPeerProofTag);

  for (int peer = 0; peer < world_size; ++peer) {
    if (peer == rank) continue;
    const Bytes32 expected = pair_proof(token, job_id, nonce, peer, rank);
    GL_CHECK(
        CRYPTO_memcmp(expected.data(), proofs_in[peer].data_ptr<uint8_t>(), expected.size()) == 0,
        "{}: the process connected as rank {} did not prove the cluster token over its Gloo "
        "pair: it was given another token, or another process connected in its place",
        context, peer);
  }
}

}  // namespace graphloom::distributed
