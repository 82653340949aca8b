#pragma once
// The job's directory on this node's own disk (tiered checkpoints, issue 38): the launch names it
// in ORCH_LOCAL_CHECKPOINT_DIR with "{node}" where each node's name goes (nodes that share one
// disk); the agent fills the name in, creates the directory (0700, for the job's user) and exports
// the result, so the job saves its fast copies there before it starts.

#include <string>

#include "agents/job_user.h"

namespace orch::agent {

// Does nothing when ORCH_LOCAL_CHECKPOINT_DIR is unset or empty. Otherwise the variable becomes
// the node's own directory, created with its missing parents (0711) and itself 0700, owned by
// `user` when the job runs as one. false with *error when the name does not fit a path, the
// directory cannot be made, or it is a symbolic link or not a directory.
bool prepare_node_local_dir(const std::string& node, const JobUser* user, std::string* error);

}  // namespace orch::agent
