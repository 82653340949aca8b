#pragma once
// Checkpoint replication and retention, pure (issue 5). The brain gathers a job's checkpoints
// and their copies, asks plan_replication what to copy and what to delete, and carries it out
// (transfers, remove actions). Rules (docs/data.md):
//
//   - Only verified copies count. A checkpoint is usable once one copy is verified.
//   - The newest usable checkpoint should be held at `policy.copies` sites: the copies it has,
//     plus transfers from a verified copy to the sites that lack one: `policy.to` first when
//     named (and usable), then the site it was saved at (a lost origin copy is re-replicated
//     there), then other usable sites, fastest measured route first, then by name.
//   - A copy that is missing or corrupt of a checkpoint among the newest `keep` usable ones is
//     re-replicated only when that checkpoint is the newest usable one (older ones are not
//     worth the bandwidth) -- the rule above covers it.
//   - Retention: checkpoints older than the newest `keep` usable ones are deleted (every copy
//     that is not already deleted or missing), except the newest "safe" one: the newest usable
//     checkpoint held at min(policy.copies, usable sites) sites, which is kept whatever its age
//     (what a lost site falls back to). Before any checkpoint is safe nothing is deleted. A
//     checkpoint with a transfer in flight (it is read) is not deleted. A checkpoint that is not
//     usable yet (being verified) is never deleted, nor counted. The newest usable checkpoint
//     is never deleted.
//   - Nothing is copied to or deleted from a site that is not usable (unreachable, or a
//     provider without storage support); nothing starts for a checkpoint that has a transfer
//     in flight to that site.
//
// Details the rules leave open, as implemented:
//   - "Held at a site" means a verified copy at a usable site; a copy at a site that is not
//     usable does not count (it cannot be copied from or resumed from now). A transfer in flight
//     to a usable site counts towards `copies` (so no second site is started meanwhile).
//   - The source of a copy is the verified copy at a usable site with the fastest measured
//     route (bandwidth[{from, to}]) to the destination, then the first by name. Unknown routes
//     rank after every measured one. The newest checkpoint only: nothing is copied when its
//     verified copies are all at unusable sites.
//   - Retention deletes every copy of an old checkpoint at usable sites whose state is not
//     deleted, missing or refused (corrupt, present and copying ones too), except where a
//     transfer of it is in flight; oldest checkpoint first, then by cluster name. A disabled
//     policy plans nothing at all.
//   - A refused copy (the site found it outside the directory it must lie in: a symbolic link
//     out of it) is never deleted, and its site is never a destination for that checkpoint (a
//     copy there would go through the link).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/model/replica_state.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

struct ReplicaView {
  std::string cluster;
  ReplicaState state = ReplicaState::present;
};

struct CheckpointView {
  std::int64_t id = 0;
  std::int64_t step = 0;
  std::string saved_at;  // cluster of the attempt that saved it
  std::vector<ReplicaView> replicas;
};

struct ReplicationInput {
  ReplicationSpec policy;
  std::vector<CheckpointView> checkpoints;  // any order
  std::set<std::string> usable_sites;       // reachable, with storage support
  // (checkpoint id, destination cluster) of transfers queued, running or verifying.
  std::set<std::pair<std::int64_t, std::string>> in_flight;
  // Measured bandwidth, bytes per second, from -> to (absent: unknown).
  std::map<std::pair<std::string, std::string>, double> bandwidth;
};

struct PlannedCopy {
  std::int64_t checkpoint_id = 0;
  std::string from;
  std::string to;
  std::string why;  // "off-site copy", "re-replicate the copy lost at alpha", ...
};

struct PlannedDelete {
  std::int64_t checkpoint_id = 0;
  std::string cluster;
  std::string why;  // "retention: older than the newest 3 verified checkpoints"
};

struct ReplicationPlan {
  std::vector<PlannedCopy> copies;
  std::vector<PlannedDelete> deletes;
};

ReplicationPlan plan_replication(const ReplicationInput& in);

// Where a copy of a checkpoint goes at another site: under that site's checkpoint root, in a
// directory orchestrate owns, so it never collides with what the job writes itself:
// <root>/.orchestrate/replicas/job-<id>/step-<step>/<basename of the source path>.
std::string replica_path(const std::string& dst_checkpoint_root, std::int64_t job_id,
                         std::int64_t step, const std::string& src_path);

// Where a staged dataset goes: <datasets_root>/<name>.
std::string dataset_path(const std::string& datasets_root, const std::string& name);

}  // namespace orch
