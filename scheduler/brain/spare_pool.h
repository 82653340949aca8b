#pragma once
// The brain's hot spares (issue 38): each cluster with `spares: N` keeps N nodes burned in and
// held idle, so that a gang that loses a node relaunches at once on its survivors and a spare
// instead of waiting for the site to grant a node.
//
// A spare's life (rows.h's SpareRow): on a tick, a cluster short of spares picks an idle,
// healthy node in service and burns it in (a probe round of that node alone); a node that fails
// is taken out of service like any failed burn-in and never used. One that passes is held by a
// holder run pinned to it (Slurm: a job; local: a process on that virtual node) whose heartbeats
// watch it like a job's; it is ready once the holder runs. Placement counts a spare's GPUs as
// held and keeps other launches off its node; a job whose last attempt lost a node on the
// cluster may take ready spares where the free GPUs fall short (placement's spares_to_take), and
// its launch cancels their holders first, in the same transaction (the outbox keeps the order).
// A spare taken, lost or released leaves a gap the next tick refills. What spares cost (GPU-hours
// held idle) is kept per cluster (Store::spare_totals).
//
// The holder and the burn-in are ordinary outbox actions (launch, probe, cancel) the site
// worker carries out; their results come back as the usual events, with tokens that start with
// kSpareTokenPrefix, and Brain hands those here.

#include <map>
#include <string>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"
#include "scheduler/brain/health_judge.h"

namespace orch {

inline constexpr std::string_view kSpareTokenPrefix = "orch-spare-";

class SparePool : BrainPart {
 public:
  SparePool(BrainCore& core, HealthJudge& health) : BrainPart(core), health_(health) {}

  // Whether an event's token (a holder's, or its burn-in round's) is a spare's.
  static bool owns(const std::string& token) { return token.starts_with(kSpareTokenPrefix); }

  // Tick: each cluster keeps as many spares as its spec asks while it is active and healthy
  // (burning in new ones, releasing extras).
  Result<void> refill();
  // The holder's and burn-in's results.
  Result<BrainReply> on(const ProbeCompleted& e);
  Result<BrainReply> on(const LaunchCompleted& e);
  // A holder seen at its site; true when that made a spare ready (room a waiting gang may take).
  Result<bool> observe(const AttemptObserved& e);
  Result<BrainReply> on(const CancelCompleted& e);
  // A launch of `job` on `cluster` takes these ready spares: their holders are cancelled (the
  // outbox rows written before the launch's, so the site frees the nodes first).
  Result<void> take(const std::string& cluster, const std::vector<std::string>& nodes, JobId job,
                    int attempt_no);

 private:
  // The spares a cluster should hold: its own `spares` and those of the jobs running there.
  Result<int> wanted_spares(const ClusterSpec& spec);
  Result<void> refill_cluster(const ClusterSpec& spec, int wanted);
  // Burns in one more spare on an idle node of the cluster, if it has one.
  Result<bool> start_spare(const ClusterSpec& spec, const std::vector<SpareRow>& live, int index);
  // Ends a live spare (state, reason), cancelling its holder when one was asked for.
  Result<void> end_spare(SpareRow& spare, SpareState to, const std::string& reason);
  Result<void> cancel_holder(const SpareRow& spare);
  // A cluster event in the log (no job).
  Result<void> note(const std::string& message);

  HealthJudge& health_;
  // After a spare failed or was lost: no new one on that cluster before this time (a site that
  // cannot hold one is not asked every tick). Not persisted: a restart may try at once.
  std::map<std::string, Millis> next_try_ms_;
  bool checked_all_ = false;                // every cluster's spares looked at since the start
  std::map<std::string, int> last_wanted_;  // per cluster, at the last refill
  // Per cluster: the store's capacity epoch when its running jobs' own spares were summed.
  std::map<std::string, std::pair<std::uint64_t, int>> job_spares_;
  // Makes a token unique among the spares this process starts within one millisecond (a
  // restart reads a later clock).
  std::uint64_t serial_ = 0;
};

// A cluster whose provider can pin a launch to a node: it may hold spares, its own or its jobs'.
bool may_hold_spares(const ClusterSpec& spec);

// The holder's launch: one node, all its GPUs, pinned there, running nothing but a sleep under
// the agent (whose heartbeats say when the node dies).
LaunchRequest spare_holder_request(const ClusterSpec& spec, const SpareRow& spare);

}  // namespace orch
