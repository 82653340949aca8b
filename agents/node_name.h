#pragma once
// The node's name as the site knows it, for the probe's output and the run's event records:
// Slurm's name for the node when srun started us, else the one a site exported, else the host's.

#include <string>

namespace orch::agent {

// gethostname(), or "" when it fails.
std::string host_name();

// $SLURMD_NODENAME, else $ORCH_NODE_NAME, else host_name() (unset and empty variables skipped).
std::string default_node_name();

}  // namespace orch::agent
