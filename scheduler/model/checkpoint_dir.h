#pragma once
// Where a job's checkpoints live at a site, and the lexical half of confining the paths a job
// reports to that place (issue 37; docs/progress-protocol.md, docs/data.md). Pure: no I/O.
//
// Every job gets a directory of its own at each site, <checkpoints_dir>/job-<id>, created by the
// provider before the job starts and named in ORCH_CHECKPOINT_DIR. A checkpoint the job reports
// must be a file or a directory strictly inside it: the directory itself is not a checkpoint
// (retention would delete every checkpoint at once), and nothing beside it is the job's.
// orchestrate's own copies of the job's checkpoints at other sites go to
// <checkpoints_dir>/.orchestrate/replicas/job-<id>, which is not inside any job's directory.
//
// These checks see only the text of a path. The site checks the same after resolving symbolic
// links (adapters/storage), just before it lists or deletes anything.

#include <cstdint>
#include <string>
#include <string_view>

#include "scheduler/common/result.h"

namespace orch {

// <checkpoints_dir>/job-<id>, in normal form (below) when checkpoints_dir is absolute, as
// written otherwise (a relative root confines nothing: confine_path refuses every path in it).
std::string job_checkpoint_dir(std::string_view checkpoints_dir, std::int64_t job_id);

// <checkpoints_dir>/.orchestrate/replicas/job-<id>: the directory orchestrate copies the job's
// checkpoints to at a site other than the one that saved them.
std::string job_replica_dir(std::string_view checkpoints_dir, std::int64_t job_id);

// A job's directory on one node's own disk (tiered checkpoints, issue 38): <root>/job-<id> with
// "{node}" in the cluster's storage.node_local root replaced by the node's name (nodes that share
// one disk, as the local provider's virtual nodes do, each get a directory of their own).
// ErrorKind::invalid when the node's name is not 1 to 64 letters, digits, '.', '_' or '-' (or
// is "." or ".."): a name a job reported cannot make the directory lead elsewhere.
inline constexpr std::string_view kNodePlaceholder = "{node}";
Result<std::string> node_local_job_dir(std::string_view root, std::string_view node,
                                       std::int64_t job_id);
// What ORCH_LOCAL_CHECKPOINT_DIR says before a node fills it in: <root>/job-<id>, "{node}" kept.
std::string node_local_dir_template(std::string_view root, std::int64_t job_id);
// The template with "{node}" (every occurrence) replaced by the node's name, checked as above.
Result<std::string> expand_node_placeholder(std::string_view text, std::string_view node);

// The path in normal form: "." components and repeated or trailing '/' dropped, and each ".."
// taking away the component before it ("/.." is "/"). ErrorKind::invalid for an empty path, a
// relative one, or one with a NUL byte. Lexical only: "/a/link/.." is "/a", whatever link is
// (the site resolves links; the brain registers the normal form, so both mean the same path).
Result<std::string> normal_absolute_path(std::string_view path);

// Whether `path` lies strictly inside `dir`, both in normal form: dir is a whole-component
// prefix of path ("/ckpt/job-1" does not hold "/ckpt/job-10"), and path is not dir itself.
bool strictly_inside(std::string_view path, std::string_view dir);

// The normal form of `path` when it lies strictly inside `dir` (normalised too); otherwise
// ErrorKind::invalid saying why: not absolute, a NUL byte, the directory itself, or outside it
// (after resolving . and ..). `dir` must be absolute and not "/", else every path is refused.
// Messages quote at most the first 200 bytes of a path.
Result<std::string> confine_path(std::string_view path, std::string_view dir);

// The shell command that creates the job's own checkpoint directory before the job starts, for
// providers that start jobs through a shell (Slurm's batch script, a Kubernetes container),
// where ORCH_CHECKPOINT_DIR is already set: `mkdir -p -m 0700`, then a check that it is a
// directory and not a symbolic link; otherwise it says why on stderr and runs `exit 1`, so the
// job never starts writing where a link leads. It names the variable only: nothing to quote.
inline constexpr std::string_view kMakeCheckpointDirCommand =
    "mkdir -p -m 0700 -- \"$ORCH_CHECKPOINT_DIR\" && [ -d \"$ORCH_CHECKPOINT_DIR\" ] && "
    "[ ! -h \"$ORCH_CHECKPOINT_DIR\" ] || { printf 'orchestrate: cannot create the checkpoint "
    "directory %s, or it is a symbolic link\\n' \"$ORCH_CHECKPOINT_DIR\" >&2; exit 1; }";

// A job spec's checkpoint.dir: a relative path of plain components ("run1", "a/b"), which names a
// subdirectory of the job's own directory. Its normal form (no trailing or repeated '/'), or
// ErrorKind::invalid for an empty or absolute path, "." or ".." components, or a NUL byte.
Result<std::string> normal_relative_subdir(std::string_view path);

}  // namespace orch
