#pragma once
// Issue 40, items 1 and 2: where a job's code and its setup live at a site, the setup's cache
// key, and the shell snippets that extract the code and run the setup there. Pure; the
// snippets read their inputs from environment variables only (nothing to quote), like
// kMakeCheckpointDirCommand:
//
//   <storage_root>/code/<sha256>.tar    the archive, staged by a transfer from the server
//   <storage_root>/code/<sha256>/       the tree, extracted once (ORCH_WORKDIR); every task
//                                       starts there. It is shared by every job with that code
//                                       and writable by them: setup's .venv lives there
//   <storage_root>/setup/<key>/         per setup key: lock (flock), log, done (the cache
//                                       marker); with setup_per_node each suffixed .<hostname>
//
// The snippets' variables: ORCH_CODE_ARCHIVE, ORCH_WORKDIR (extract); ORCH_WORKDIR,
// ORCH_SETUP_DIR, ORCH_SETUP_COMMAND, ORCH_SETUP_FAILED (setup). The provider exports them.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/model/site_types.h"

namespace orch {

std::string code_dir(const std::string& storage_root);  // <root>/code
std::string code_archive_path(const std::string& storage_root, const std::string& sha256);
std::string code_tree_path(const std::string& storage_root, const std::string& sha256);
std::string setup_root(const std::string& storage_root);  // <root>/setup
std::string setup_dir_path(const std::string& storage_root, const std::string& key);

// The server's code store as a transfer's source (scheduler/data/code_staging.h): this
// pseudo-cluster, and "/code/<sha256>.tar", a path under the server's state directory (the
// server's transfer port reads it from there: adapters/code/code_store.h keeps it).
inline constexpr std::string_view kCodeStoreSite = "orchestrate-server";
std::string code_store_path(const std::string& sha256);

// The setup's cache key: SHA-256 (hex) of the cluster, the code's hash, the setup text and the
// container image ("" until containers exist), each length-prefixed so no two tuples collide.
std::string setup_key(std::string_view cluster, std::string_view code_sha256,
                      std::string_view setup, std::string_view container);

// A lowercase 64-digit hex SHA-256: the only code hash a path may be built from.
bool is_code_sha256(std::string_view s);

// The file in a run directory that says the attempt's setup failed: "exit N" then its last
// lines. The provider reads it into the attempt's end (ExitCause::setup_failed).
inline constexpr std::string_view kSetupFailedFile = "setup_failed";
// The exit status of a task or step whose setup failed.
inline constexpr int kSetupFailedExit = 97;
// Lines of the setup's output kept in the failure's reason.
inline constexpr int kSetupTailLines = 20;

// An attempt's end when its run directory holds kSetupFailedFile (`marker`: "exit N" then the
// setup's last lines): cause setup_failed, the exit code, and a detail "setup failed (exit N):
// ..." that keeps the newest lines, joined by " | ", within kSetupDetailBytes.
inline constexpr std::size_t kSetupDetailBytes = 280;
ExitStatus setup_failed_exit(std::string_view marker);

// The snippets' variables for a launch (empty when it has neither code nor setup):
// ORCH_WORKDIR, ORCH_CODE_ARCHIVE, ORCH_SETUP_DIR, ORCH_SETUP_COMMAND and ORCH_SETUP_FAILED
// (`setup_failed_file`: <run directory>/setup_failed).
std::vector<std::pair<std::string, std::string>> workdir_env(const LaunchRequest& r,
                                                             const std::string& setup_failed_file);

// What a task runs before its command where the provider has no step of its own for it (the
// local provider): `/bin/sh -c <this> orch-task <the command's argv>`: the code extracted, the
// setup run (once per key, under its lock), then into ORCH_WORKDIR and `exec "$@"`. Empty when
// the launch has neither code nor setup (the command's argv runs as it is).
std::string task_prelude(const LaunchRequest& r);

// Extracts ORCH_CODE_ARCHIVE into ORCH_WORKDIR unless that is already a directory: into a
// temporary directory beside it (GNU tar, --no-same-owner, --keep-old-files), refusing a tree
// with a symbolic link that leads out of it, then renamed into place (mv -T: a tree another
// stager put there first is kept, the temporary one removed). A half-extracted tree is never at
// ORCH_WORKDIR. Exits 1 (saying why on stderr) when the tree is not there afterwards.
std::string_view code_extract_snippet();

// Runs ORCH_SETUP_COMMAND in ORCH_WORKDIR once per ORCH_SETUP_DIR (per node: per_node), under
// flock on the shared filesystem; its output prefixed "[setup] " on stdout (the attempt's log)
// and kept in the setup directory's log. A done marker makes later runs say "cached" and start
// at once. On failure writes ORCH_SETUP_FAILED ("exit N" and the last kSetupTailLines lines)
// and exits kSetupFailedExit; a failure marker already there (another task of the same
// attempt ran it) fails at once without running it again.
std::string setup_snippet(bool per_node);

}  // namespace orch
