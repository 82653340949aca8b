#pragma once
// Reading a secret's value from a file, bounded in every way a file can hurt the reader: only a
// regular file (a FIFO, a directory, a device or a socket is refused at once, never waited on),
// at most kMaxSecretBytes, and within a deadline (a file on a stalled network filesystem gives
// up instead of holding the thread). The CLI reads `secret set --from-file` with it, the server
// the clusters file's `secrets:` and webhook sources.

#include <chrono>
#include <cstddef>
#include <string>

#include "scheduler/common/result.h"
#include "scheduler/model/site_types.h"

namespace orch {

inline constexpr std::size_t kMaxSecretBytes = 64 * 1024;
inline constexpr std::chrono::milliseconds kSecretReadDeadline{5000};

// The file's content with one trailing newline (and a carriage return before it) dropped.
// invalid: not a regular file, larger than max_bytes, holds a NUL byte (no environment variable
// can carry one), or cannot be read in time; the message names `what` (e.g. "secret hf") and
// the path, for the administrator who named it.
Result<std::string> read_secret_file(const std::string& what, const std::string& path,
                                     std::chrono::milliseconds deadline = kSecretReadDeadline,
                                     std::size_t max_bytes = kMaxSecretBytes);

// The value at an administrator's source: a file read as read_secret_file does, or a variable
// of this process's environment (invalid when unset).
Result<std::string> read_secret_source_value(const std::string& what, const SecretSource& source);

// What a secret's value must be to reach a job's environment: no NUL byte, at most
// kMaxSecretBytes. invalid otherwise, naming `what`, never the value.
Result<void> check_secret_value(const std::string& what, const std::string& value);

}  // namespace orch
