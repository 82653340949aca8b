#pragma once
// What a failed rsync (or the ssh in front of it) becomes: ErrorKind::unreachable when a login
// node could not be reached (ssh's exit 255, a refused or timed-out connection, a host key or
// login refused), else ErrorKind::io with the exit code's meaning and the last lines rsync
// wrote on stderr. Pure.

#include <cstddef>
#include <string>
#include <string_view>

#include "adapters/process/child_process.h"
#include "scheduler/common/result.h"

namespace orch::transfer {

// The last `n` non-blank lines of text, joined by " | ".
std::string last_lines(std::string_view text, std::size_t n);

// Whether stderr says a connection to a login node failed (OpenSSH's and rsync's words).
bool says_unreachable(std::string_view err);

// context: which transfer and route, e.g. "transfer 7 (pull via beta login node, alpha:/a ->
// beta:/b)".
Error rsync_failure(const std::string& context, const process::ChildExit& exit,
                    std::string_view err);

}  // namespace orch::transfer
