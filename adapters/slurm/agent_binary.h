#pragma once
// The server's own orchestrate-agent, as SlurmSite ships it to a cluster for node probes: its
// bytes and a short content id that names the uploaded copy (probe_command.h), so each build
// is uploaded once per cluster and never mixed up with another.

#include <cstdint>
#include <string>

#include "scheduler/common/result.h"

namespace orch::slurm {

struct AgentBinary {
  std::string path;     // on this machine
  std::string content;  // the whole executable
  std::string id;       // the first 16 hex digits of the content's SHA-256
  std::int64_t mtime_ns = 0;
};

// <directory of /proc/self/exe>/orchestrate-agent: beside the server binary, where the build
// puts it (build/bin) and where an installation keeps it.
std::string default_agent_path();

// Reads the executable at `path`. ErrorKind::misconfigured (the server's own set-up) when it is
// missing or unreadable (the message says to build orchestrate-agent), ErrorKind::io for a read
// error.
Result<AgentBinary> read_agent_binary(const std::string& path);

// Whether the file at `path` is still the one `agent` was read from (same size and mtime), so
// a rebuilt agent is read and hashed again but an unchanged one is not.
bool agent_unchanged(const AgentBinary& agent);

// The first 16 hex digits of the SHA-256 of `bytes`.
std::string short_sha256(const std::string& bytes);

}  // namespace orch::slurm
