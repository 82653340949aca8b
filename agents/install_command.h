#pragma once
// `orchestrate-agent install DEST`: copies the running agent (/proc/self/exe) to DEST, so that
// an image holding only the agent can put it where another container runs it. On Kubernetes
// (issue 44) an init container of the agent image (agents/Dockerfile) installs it into an
// emptyDir that the job's container mounts too (adapters/kubernetes/kube_agent_container.h).
//
// Atomic: the bytes go to a temporary file beside DEST (same directory, so the same
// filesystem), mode 0755, fsync'd, then renamed over DEST. A reader never sees half an agent,
// and an install that fails leaves DEST as it was and no temporary file behind.

#include <string>
#include <vector>

namespace orch::agent {

struct InstallOptions {
  std::string dest;  // where the agent goes (a file path, its directory must exist)
  std::string source = "/proc/self/exe";  // what is copied (tests may name another file)
};

// The words after `install`: exactly one, DEST (not empty, not an option). On failure returns
// false and sets *error to a usage message.
bool parse_install_options(const std::vector<std::string>& args, InstallOptions* options,
                           std::string* error);

// Copies options.source to options.dest as above. "" on success, else why (naming the path and
// the system's reason), and nothing left behind.
std::string install_agent(const InstallOptions& options);

// Prints "orchestrate-agent: installed at DEST" on stdout and returns 0, or the reason on
// stderr and returns 1.
int install_command(const InstallOptions& options);

}  // namespace orch::agent
