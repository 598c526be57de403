// Gloo's TCP pairs carry no credentials: whoever connects to a pair's listening socket first is
// taken for that peer. authenticate_peers makes every rank prove over each of its pairs that it
// holds the cluster token, so a process in a peer's place fails the job at start instead of
// joining its collectives (and sending it gradients).
#pragma once

#include <string>

namespace c10d {
class ProcessGroup;
}

namespace graphloom::dist {

// Each rank sends every peer a fresh nonce and answers each peer's nonce with
// HMAC-SHA256(token, nonce, sender rank, receiver rank) over the same pair; a wrong answer throws
// an Error naming the peer's rank. `context` ("rank 1 of 2 (rendezvous ...)") goes into messages.
// Every rank of `group` must call it, with the same tag space unused by anything in flight.
void authenticate_peers(c10d::ProcessGroup& group, const std::string& token,
                        const std::string& context);

}  // namespace graphloom::dist
