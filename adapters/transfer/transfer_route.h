#pragma once
// Which way a transfer goes, from the two clusters' specs alone (pure):
//
//   local   -> local    "local": rsync between two paths on this machine
//   slurm   -> the same slurm cluster: "on <name> login node": rsync between two paths there
//   slurm   -> slurm    "pull via <dst> login node" when <dst>'s data.pull_from names <src>:
//                        rsync runs on <dst>'s login node and pulls from <src>'s
//                        otherwise "relay via orchestrator": pulled here, then pushed
//   slurm   -> local    "pull from <src> login node": rsync here pulls over ssh
//   local   -> slurm    "push to <dst> login node": rsync here pushes over ssh
//   kubernetes, either side: ErrorKind::unsupported (no route yet)

#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/transfer_port.h"

namespace orch::transfer {

enum class RouteKind { local, on_login_node, pull_via_destination, pull_here, push_here, relay };

struct RoutePlan {
  RouteKind kind = RouteKind::local;
  ClusterSpec from;
  ClusterSpec to;
  PeerSpec peer;     // pull_via_destination: how the destination reaches the source
  std::string name;  // TransferProgress::route, e.g. "pull via beta login node"
};

// The route for a request. Errors: invalid for an unknown cluster, a relative path or a copy
// onto itself; unsupported for a Kubernetes or unknown provider, and for a login node whose key
// needs a passphrase (ssh.key_passphrase_env: the OpenSSH client runs in batch mode and cannot
// ask for it).
Result<RoutePlan> plan_route(const std::vector<ClusterSpec>& clusters,
                             const TransferRequest& request);

// The cap a transfer runs at: the smallest of the caller's cap and both sites'
// data.bwlimit_mb_s (MB = 10^6 bytes); 0 (none) when none is set.
double effective_cap(double requested_bytes_per_s, const ClusterSpec& from, const ClusterSpec& to);

}  // namespace orch::transfer
