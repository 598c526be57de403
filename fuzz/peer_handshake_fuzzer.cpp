// The Gloo pair handshake (authenticate_peers) against a peer that sends arbitrary bytes: two
// ranks of a real Gloo group in this process, rank 0 running the handshake, rank 1 playing the
// process connected in its peer's place. Input: [mode] [nonce length] [nonce] [proof length]
// [proof bytes]. Mode 0: rank 1 sends the input's proof as it is; mode 1: rank 1 sends the true
// proof XOR the input's bytes, so that an all-zero mask is the honest peer. Rank 0 must accept
// exactly the honest peer's proof and refuse everything else with an Error naming rank 1.
#include <c10/util/Exception.h>

#include <ATen/ATen.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "distributed/runtime/gloo_backend.h"
#include "distributed/runtime/peer_authentication.h"
#include "graphloom/base/error.h"

namespace {

using graphloom::distributed::kPeerNonceTag;
using graphloom::distributed::kPeerProofTag;
using graphloom::distributed::pair_proof;

constexpr const char* kToken = "fuzz-cluster-token-0123456789abcdef";
constexpr const char* kJob = "fuzz-job";

struct Input {
  bool xor_mask = false;
  std::string nonce;  // what rank 1 sends as its nonce (up to 32 bytes)
  std::string proof;  // its proof, or the mask over the true one
};

// Reads one length-prefixed field of at most 32 bytes. Longer is not fuzzed: a message longer
// than the buffer the receiver posted fails an enforce in Gloo's own I/O thread
// (transport/tcp/pair.cc, "Received data size doesn't match expected size"), which terminates
// the receiving process; no caller can catch it (docs/toolchain.md, "Sanitizers and fuzzing").
std::string field(const uint8_t*& data, const uint8_t* end) {
  if (data == end) return {};
  const std::size_t wanted = *data++ % 33;
  const std::size_t length = std::min<std::size_t>(wanted, end - data);
  std::string out(reinterpret_cast<const char*>(data), length);
  data += length;
  return out;
}

at::Tensor bytes_tensor(const std::string& bytes) {
  at::Tensor out = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
  if (!bytes.empty()) std::memcpy(out.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  return out;
}

void exchange(c10d::Backend& group, const at::Tensor& out, const at::Tensor& in, int tag) {
  std::vector<at::Tensor> into{in};
  auto received = group.recv(into, 0, tag);
  std::vector<at::Tensor> from{out};
  auto sent = group.send(from, 0, tag);
  received->wait();
  sent->wait();
}

// Rank 1: answers rank 0's nonce as the input says.
void impostor(c10d::Backend& group, const Input& input) {
  const at::Tensor nonce_in = at::zeros({32}, at::kByte);
  exchange(group, bytes_tensor(input.nonce), nonce_in, kPeerNonceTag);
  std::string proof = input.proof;
  if (input.xor_mask) {
    std::array<uint8_t, 32> nonce;
    std::memcpy(nonce.data(), nonce_in.data_ptr<uint8_t>(), nonce.size());
    const auto honest = pair_proof(kToken, kJob, nonce, 1, 0);
    proof.resize(std::max<std::size_t>(proof.size(), honest.size()), '\0');
    for (std::size_t i = 0; i < honest.size(); ++i) proof[i] ^= static_cast<char>(honest[i]);
  }
  exchange(group, bytes_tensor(proof), at::zeros({32}, at::kByte), kPeerProofTag);
}

bool is_honest(const Input& input) {
  if (!input.xor_mask) return false;
  for (char c : input.proof) {
    if (c != 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const uint8_t* end = data + size;
  Input input;
  input.xor_mask = (*data++ & 1) != 0;
  input.nonce = field(data, end);
  input.proof = field(data, end);

  const auto store = c10::make_intrusive<c10d::HashStore>();
  const graphloom::distributed::GlooBackendOptions options{
      .timeout = std::chrono::seconds(10), .threads = 1, .hostname = "127.0.0.1"};
  std::string impostor_error;
  std::thread peer([&] {
    try {
      impostor(*graphloom::distributed::make_gloo_backend(store, 1, 2, options), input);
    } catch (const std::exception& e) {
      impostor_error = e.what();  // rank 0 hung up on it: expected after a refusal
    }
  });
  bool accepted = false;
  std::string refusal;
  try {
    const auto group = graphloom::distributed::make_gloo_backend(store, 0, 2, options);
    graphloom::distributed::authenticate_peers(*group, kToken, kJob, "fuzz rank 0");
    accepted = true;
  } catch (const graphloom::Error& e) {
    refusal = e.what();
  } catch (const c10::Error& e) {
    refusal = e.what_without_backtrace();
  }
  peer.join();
  if (accepted != is_honest(input)) {
    std::fprintf(stderr, "rank 0 %s a peer that was %s (%s)\n", accepted ? "accepted" : "refused",
                 is_honest(input) ? "honest" : "not honest", refusal.c_str());
    std::abort();
  }
  if (!accepted && refusal.find("rank 1 did not prove the cluster token") == std::string::npos) {
    std::fprintf(stderr, "the refusal does not name the peer: %s\n", refusal.c_str());
    std::abort();
  }
  return 0;
}
