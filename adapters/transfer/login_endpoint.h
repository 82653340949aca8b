#pragma once
// How the OpenSSH client here reaches a cluster's login node: its SshSpec made into an
// SshEndpoint. Host keys are always checked strictly, against
//   - ssh.known_hosts when the spec has one (accept-new there if ssh.trust_on_first_use);
//   - else the pinned ssh.host_key: `ssh-keyscan` reads the server's keys, `ssh-keygen -lf`
//     fingerprints each, and only those equal to the pin go into a private known_hosts file
//     under the work directory (none equal: ErrorKind::unreachable naming both fingerprints);
//   - else, with ssh.trust_on_first_use, a private file that records the first key seen;
//   - else the spec is refused (invalid): there is nothing to check the key against.

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/ssh/fingerprint.h"
#include "adapters/transfer/rsync_command.h"
#include "scheduler/common/result.h"
#include "scheduler/common/text.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::transfer {

class LoginEndpoints {
 public:
  // dir: a private directory for the generated known_hosts files (made on first use, 0700).
  explicit LoginEndpoints(std::string dir) : dir_(std::move(dir)) {}

  // The endpoint of the cluster's login node. Thread-safe; a pinned key is scanned once.
  Result<SshEndpoint> endpoint(const ClusterSpec& cluster);

 private:
  Result<std::string> pinned_known_hosts(const ClusterSpec& cluster);

  std::string dir_;
  std::mutex mu_;
  std::map<std::string, std::string> pinned_;  // "name host port pin" -> file
};

// How a destination's login node reaches a peer it pulls from (paths as seen there; the pull
// checks host keys strictly too, against the peer's known_hosts or that node's default files).
SshEndpoint peer_endpoint(const PeerSpec& peer, int connect_timeout_s);

// ssh-keyscan's key lines ("[host]:port type base64"), its comments and blank lines dropped.
std::vector<std::string> keyscan_lines(std::string_view output);
// The fingerprint in an `ssh-keygen -lf` line ("256 SHA256:abc [host]:port (ED25519)").
std::optional<std::string> keygen_fingerprint(std::string_view line);

}  // namespace orch::transfer
