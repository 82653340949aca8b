#pragma once
// Listing and deleting storage on this machine: the scripts of storage_script.h run through
// /bin/sh here (LocalSite's storage, which is this host's filesystem), through
// adapters/process: its own process group, stdin from /dev/null, and at the deadline the whole
// group is SIGKILLed.

#include <chrono>
#include <cstddef>
#include <string>

#include "scheduler/common/result.h"
#include "scheduler/model/manifest.h"
#include "scheduler/model/site_types.h"

namespace orch::storage {

// Default deadlines: a listing without hashes reads only metadata; hashing reads every byte
// (tens of GB take minutes) and so may a deletion of a large tree.
inline constexpr std::chrono::milliseconds kLocalListTimeout = std::chrono::minutes(10);
inline constexpr std::chrono::milliseconds kLocalHashTimeout = std::chrono::hours(1);

// The most stdout a script may print (a listing of millions of files is a few hundred MB);
// beyond it the script is killed and the call fails with ErrorKind::io.
inline constexpr std::size_t kMaxScriptOutput = std::size_t{1} << 30;

struct ScriptRun {
  int exit_status = -1;  // -1 when a signal ended it (err then ends with a line naming it)
  std::string out;
  std::string err;  // at most its last 64 KiB
};

// Runs `script` with /bin/sh -c. ErrorKind::io when it cannot be started, runs past `timeout`
// or prints more than max_output bytes on stdout; a non-zero exit status is not an error.
Result<ScriptRun> run_shell_script(const std::string& script, std::chrono::milliseconds timeout,
                                   std::size_t max_output = kMaxScriptOutput);

// The manifest of request.path on this machine (see storage_script.h for what is listed and
// the errors). timeout 0: kLocalListTimeout for Hash::none, else kLocalHashTimeout.
Result<Manifest> local_manifest(const ManifestRequest& request,
                                std::chrono::milliseconds timeout = {});

// Deletes a file or tree on this machine, only inside request.within (remove_script's
// refusals; missing is success). timeout 0: kLocalHashTimeout.
Result<void> local_remove(const RemoveRequest& request, std::chrono::milliseconds timeout = {});

}  // namespace orch::storage
