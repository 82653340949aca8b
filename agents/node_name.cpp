// See node_name.h.
#include "agents/node_name.h"

#include <unistd.h>

#include <cstdlib>

namespace orch::agent {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

std::string default_node_name() {
  for (const char* var : {"SLURMD_NODENAME", "ORCH_NODE_NAME"}) {
    const char* v = std::getenv(var);
    if (v && *v) return v;
  }
  return host_name();
}

}  // namespace orch::agent
