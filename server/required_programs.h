#pragma once
// The programs the server runs on this machine, the Debian package of each and why it is
// needed: the one list that `orchestrate serve` and `orchestrate demo` check at start and that
// the Makefile's RUN_PACKAGES installs (`make deps`); a test keeps the two in agreement.

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/spec/cluster_spec.h"

namespace orch {

struct RequiredProgram {
  std::string_view program;  // a name looked up in PATH, or an absolute path
  std::string_view package;  // the Debian package that provides it
  std::string_view why;
  // Needed only when a cluster of this provider is configured; empty: always.
  std::string_view provider;
};

const std::vector<RequiredProgram>& required_programs();

// Those required programs (for the given clusters) that cannot be found: in `path` (a PATH
// value) unless absolute, and executable.
std::vector<RequiredProgram> missing_programs(const std::vector<ClusterSpec>& clusters,
                                              const std::string& path);

// Nothing when none is missing; else one line per program (what it is for, its package) and
// the apt-get command that installs them all.
std::string missing_programs_message(const std::vector<RequiredProgram>& missing);

}  // namespace orch
