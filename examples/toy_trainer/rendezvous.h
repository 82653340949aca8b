#pragma once
// How the ranks of a multi-rank toy_trainer find each other. Rank 0 listens on the master port
// (SO_REUSEADDR, every local address); every other rank connects to master_addr:master_port,
// retrying until the rendezvous timeout, and sends a hello with its rank, world size and node
// name. Rank 0 checks that every rank arrives exactly once and that all world sizes agree, then
// sends each a welcome: from then on the ranks are a star around rank 0.

#include <csignal>
#include <string>
#include <vector>

#include "examples/toy_trainer/launch_env.h"
#include "examples/toy_trainer/net.h"

namespace toy {

struct Group {
  int rank = 0;
  int world = 1;
  // Rank 0: peers[r] is the connection to rank r (peers[0] is unused). Others: peers[0] is the
  // connection to rank 0.
  std::vector<net::Fd> peers;
  // Rank 0: each rank's node name as its hello said (for the "ranks" of progress lines).
  std::vector<std::string> nodes;
};

enum class Met { ok, failed, interrupted };

// Brings the ranks together; with a world of one there is nothing to do. `stop` (set by the
// SIGTERM handler) interrupts the wait. failed: `error` says why, naming the address or rank.
Met rendezvous(const LaunchEnv& env, double timeout_s, const volatile std::sig_atomic_t& stop,
               Group& out, std::string& error);

// Tells every connected peer that the job cannot go on (rank 0's abort frame); best effort.
void abort_peers(Group& g, const std::string& why);

}  // namespace toy
