#pragma once
// Issue 40, item 1: the job's code (a workdir archive) staged to a site through the transfers
// datasets and checkpoints take, and the old code pruned. Pure.
//
// A code copy is a transfer row from the server's code store, src_cluster kCodeStoreSite and
// src_path code_store_path ("/code/<sha256>.tar", workdir.h) (a path under the server's state
// directory; the server's transfer port reads it from there), to <storage_root>/code/<sha256>.tar
// at the site (code_archive_path, scheduler/model/workdir.h). It has no copy row and nothing to
// verify beyond the transfer itself: the tree is extracted (and checked) at the site when a task
// starts. Once one is done, every later job with the same code starts at once there: the code
// is sent to each site once per hash.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/model/replica_state.h"
#include "scheduler/model/workdir.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

// What the placer does about a job's code at a site, from the newest transfer of that archive
// there (nullopt: none yet).
enum class CodeStep { ready, wait, start };
struct CodeCopy {
  std::int64_t id = 0;
  TransferState state = TransferState::queued;
  std::string error;  // the last failure
};
CodeStep next_code_step(const std::optional<CodeCopy>& newest);

// Why a job's code cannot be staged to `cluster`, or nullopt when it can: a local or Slurm
// cluster always can (a plain copy; rsync/SFTP over the login node); a Kubernetes cluster when
// its storage root (storage.root) lies on one of its own writable volumes (kubernetes.volumes),
// which both its pods and its storage helper pod mount, so that the helper's copy is what the
// pods extract; any other provider cannot.
std::optional<std::string> code_route_refusal(const ClusterSpec& cluster);

// Pruning: a copy of some code (a site's tree and archive, or the server's archive with
// cluster == kCodeStoreSite) and the jobs that name that code.
struct CodeCopyHeld {
  std::string sha256;
  std::string cluster;
  Millis staged_ms = 0;  // when it got there (a recent copy is kept for the job it is for)
};
struct CodeUse {
  std::string sha256;
  bool live = false;               // the job still waits or runs
  std::optional<Millis> ended_ms;  // when it ended (terminal jobs)
};
// The copies no live job uses and no job ended within keep_ms used, staged more than keep_ms
// ago: safe to remove. A hash any live job names is kept everywhere (it may resume anywhere).
std::vector<CodeCopyHeld> code_to_prune(const std::vector<CodeCopyHeld>& held,
                                        const std::vector<CodeUse>& uses, Millis now,
                                        Millis keep_ms);

}  // namespace orch
