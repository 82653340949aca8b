#pragma once
// Where this process stands in its gang, from the launch contract's variables
// (docs/launch-contract.md): ORCH_* first, then the torch names. None set: rank 0 of 1.

#include <string>

namespace toy {

struct LaunchEnv {
  int rank = 0;
  int world = 1;
  bool from_env = false;    // some rank or world variable was set
  std::string master_addr;  // needed when world > 1
  int master_port = 0;      // 1..65535 when world > 1
  std::string node_rank;    // as given, "?" when unset (only printed)
  std::string nnodes;       // likewise
  std::string local_rank;   // likewise
  std::string host;         // gethostname()
  std::string node_name;    // $ORCH_NODE_NAME, "-" when unset
  std::string report_node;  // $SLURMD_NODENAME, else $ORCH_NODE_NAME, else host: for "ranks"
};

// Reads the variables. A bad value (rank outside the world, a world > 1 without a master
// address or port, a port that is not 1..65535) returns false with `error` naming the variable.
bool read_launch_env(LaunchEnv& out, std::string& error);

// "rank 1/3 node 1/3 local 0 master 127.0.0.1:23456 host h node_name n": printed once at start.
std::string describe(const LaunchEnv& env);

}  // namespace toy
