#pragma once
// What placing a job on a cluster writes, decided without I/O: the new attempt, the attempt it
// follows with the steps that one lost, the launch request for the site's outbox and the event's
// words. Placer::try_place gathers the inputs (the placement decision, staging, resume
// candidates) and records the plan; a test can inspect it without a store.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/model/site_types.h"
#include "scheduler/placement/plugin.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/rows.h"

namespace orch {

struct LaunchPlanInput {
  const JobRow* job = nullptr;
  const std::vector<AttemptRow>* attempts = nullptr;  // the job's so far, oldest first
  const ClusterSpec* site = nullptr;                  // where it was placed
  // Checkpoints it may resume from there, newest first (the site worker checks each).
  std::vector<ResumeCandidate> candidates;
  // The oldest of them worth resuming from, and why (LaunchRequest::resume_floor_step).
  std::optional<std::int64_t> resume_floor_step;
  std::string resume_floor_reason;
  bool saved_before = false;                    // the job has saved a checkpoint, here or elsewhere
  std::map<std::string, std::string> data_env;  // where its staged datasets are
  std::vector<std::string> exclude_nodes;       // nodes the launch must not use
  // Hot spares it takes (issue 38) and the nodes of its last attempt that survived: the launch
  // must get both (LaunchRequest::include_nodes). Empty: wherever the site grants.
  std::vector<std::string> spares;
  std::vector<std::string> survivors;
  // The save times the job's checkpoints reported (issue 43; LaunchRequest::io_stall_after_s).
  std::vector<double> save_times_s;
  Millis now = 0;
};

struct LaunchPlan {
  AttemptRow attempt;                  // to insert (no id yet)
  std::optional<AttemptRow> previous;  // the attempt it follows, steps_lost set, to write
  LaunchRequest launch;                // the outbox row's payload
  std::string placed_message;          // "attempt 2 placed on alpha resuming from step 200 (...)"
  bool from_the_start = false;         // no checkpoint to resume from
  std::vector<std::string> spares;     // the hot spares the launch takes (their holders go)
};

// The attempt a new one follows: the newest that carried the job. An attempt asked to stop is a
// duplicate the brain cancelled (reconciler.cpp) unless it hung: it does not carry the job.
const AttemptRow* carrier(const std::vector<AttemptRow>& attempts);

// Unique per attempt and findable at the site: "orch-<job>-<no>-<now in base 36>".
std::string attempt_token(JobId job, int attempt_no, Millis now);

// What the placement pipeline is asked for the job's next attempt: where the previous one ran
// decides whether to stay (a crash of the job itself: its data is there) or move away (a failed
// launch or a lost attempt), and a node failure rules out those nodes (and lets it take the
// cluster's hot spares). job must outlive it.
PlacementRequest placement_request(const JobRow& job, const std::vector<AttemptRow>& attempts);

LaunchPlan plan_launch(const LaunchPlanInput& in);

// The nodes of the job's last attempt on `cluster` that a launch taking hot spares keeps: all
// but those in `unusable` (the lost node among them), in the attempt's order.
std::vector<std::string> surviving_nodes(const std::vector<AttemptRow>& attempts,
                                         const std::string& cluster,
                                         const std::vector<std::string>& unusable);

}  // namespace orch
