#pragma once
// Jobs never run as the server (issue 37; docs/security.md, "The host"). A root server runs a
// local site's jobs only as the user its `local.run_as` names, and lets that user search the
// state directory down to the sites' folders; anything else is refused at start (and when a
// cluster joins a running server), saying what to set. Part of the composition root.

#include <sys/types.h>

#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

// ErrorKind::invalid, naming the cluster and what to set, when this process is root and a local
// cluster has no run_as, or when a cluster's run_as cannot be used: this process is not root
// (it cannot switch users), the user does not exist, or it is root itself.
Result<void> check_local_run_as(const std::vector<ClusterSpec>& clusters);

// 0701 when a local cluster with run_as keeps its storage in the state directory (an empty
// storage root is the default, <state>/sites/<name>), else 0700. Server::start gives the state
// directory this mode from its first step, so that a restart never closes it under the jobs
// still running from the last one (a checkpoint being written would fail).
mode_t state_dir_mode(const std::vector<ClusterSpec>& clusters, const std::string& state_dir);

// When a local cluster with run_as keeps its storage in the state directory (the default,
// <state>/sites/<name>): the state directory and sites/ become searchable by others (0701: no
// listing), and every other entry of the state directory owner-only, so the job's user can go
// through to its run directory and nothing else of the state directory opens to it.
Result<void> open_state_dir_to_jobs(const std::vector<ClusterSpec>& clusters,
                                    const std::string& state_dir);

}  // namespace orch
