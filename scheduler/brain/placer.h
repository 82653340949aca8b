#pragma once
// The brain's placing part: accepts a job, keeps the queue of waiting jobs, and places them.
// A round tries only the jobs a change since their last try could have unblocked
// (waiting_queue.h); placing one job reads the clusters as placement sees them, asks the
// pipeline, asks the staging part (DataStager) what the launch needs first, decides the launch
// with plan_launch (pure, launch_plan.h) and records it: the attempt, the outbox row, the job's
// state and event, all in the brain's one transaction.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"
#include "scheduler/brain/data_stager.h"
#include "scheduler/brain/health_judge.h"
#include "scheduler/brain/job_holds.h"
#include "scheduler/brain/launch_plan.h"
#include "scheduler/brain/spare_pool.h"
#include "scheduler/brain/waiting_queue.h"
#include "scheduler/placement/backfill.h"
#include "scheduler/placement/pipeline.h"
#include "scheduler/placement/preemption.h"
#include "scheduler/placement/team_quotas.h"

namespace orch {

class Placer : BrainPart {
 public:
  Placer(BrainCore& core, PlacementPipeline pipeline, DataStager& staging, HealthJudge& health,
         SparePool& spares)
      : BrainPart(core),
        pipeline_(std::move(pipeline)),
        staging_(staging),
        health_(health),
        spares_(spares),
        holds_(core) {}

  // A job is submitted: checked against the configuration, stored, and placed if it fits now.
  Result<BrainReply> on(const SubmitJob& e);

  // At submit (issue 42): a job no configured cluster could ever hold is refused (every point
  // of a sweep is checked) naming the largest shape each cluster offers, unless the submitter
  // asked to queue it anyway (for a cluster still to come); placer_submit.cpp.
  Result<void> refuse_if_never_fits(const std::vector<JobSpec>& points, bool queue_anyway);

  // Reads the waiting jobs from the store (at start, and after a rolled-back event).
  Result<void> load_queue();
  // Around each event: the queue follows what the committed transaction wrote.
  void begin_event() {
    blocked_marks_.clear();
    held_marks_.clear();
  }
  void after_commit(bool committed);

  // Places the waiting jobs whose backoff has passed (highest priority first, then resuming,
  // then oldest) and that a change since their last try could have unblocked. With team
  // quotas, jobs that would run within their team's quota go first; then those that would
  // borrow, by priority and then the smallest dominant share of their team.
  Result<void> place_waiting_jobs();
  // Tries to place one job now; leaves it waiting with a reason when nothing fits (and notes
  // that it is blocked at the current capacity version).
  Result<void> try_place(JobRow& job);
  // Where the job of an attempt still queued at its site would be placed now if that site were
  // a cluster to avoid (as its next placement will treat it): another cluster's name, or
  // nullopt when none but the queued one would take it.
  Result<std::optional<std::string>> better_than_queue(const JobRow& job, const AttemptRow& queued);
  // What holds a waiting job whatever the clusters hold (dependencies, budgets; job_holds.h).
  JobHolds& holds() { return holds_; }

 private:
  // Writes what plan_launch decided: the attempts, the outbox row, the job's state, the event.
  Result<void> record_launch(JobRow& job, LaunchPlan plan);
  // The job fits nowhere: when running jobs of lower priority hold what it needs, asks the
  // cheapest of them to save and make room (placement/preemption.h); the attempt tracker stops
  // them at their checkpoint or grace (AttemptTracker::advance_preemptions). Sets `reason` to
  // what the job now waits for when a preemption is under way for it, and `notes` to each
  // preemption it considered, taken or not, and why (kept with the verdicts, issue 42).
  Result<void> consider_preemption(const JobRow& job, const PlacementRequest& req,
                                   const std::vector<ClusterView>& views, std::string& reason,
                                   std::vector<PreemptionNote>& notes);
  // consider_preemption's plan: the cheapest victims, within the team's quota first (with
  // quotas); nullopt when none lets the job fit. `notes`: what the pass that decided considered.
  Result<std::optional<PreemptionPlan>> plan_room(const JobRow& job, const PlacementRequest& req,
                                                  const std::vector<ClusterView>& views,
                                                  std::vector<PreemptionNote>& notes);
  // Backfill (placement/backfill.h): the job fits nowhere for now; when no job ahead of it in
  // the queue holds GPUs already, GPUs are held for it where it can start soonest.
  Result<void> consider_hold(const JobRow& job, const PlacementRequest& req,
                             const std::vector<ClusterView>& views);
  // Puts hold_ into the cluster views (what the `held` filter reads) and notes the capacity.
  void apply_hold();
  // What moving the job costs at each cluster: copying its newest checkpoint there (its datasets'
  // copies are staging_s); nothing for a job that never ran.
  Result<void> fill_move_costs(PlacementRequest& req, const JobRow& job,
                               const std::vector<AttemptRow>& attempts);
  // What backfill asks of a request: the job, the time, when an attempt placed now must end.
  void fill_backfill(PlacementRequest& req, const JobRow& job) const;
  // The job was placed: attempts still asked to make room for it are left to run.
  Result<void> call_off_preemptions(JobId job);
  // try_place's steps. The request with everything placement weighs (backfill, staging and move
  // costs, quota room).
  Result<PlacementRequest> full_request(const JobRow& job, const std::vector<AttemptRow>& attempts);
  // Runs the pipeline within the team's quota (with quotas), then borrowing if the job may.
  PlacementDecision choose_cluster(PlacementRequest& req, const JobSpec& spec,
                                   std::vector<ClusterView>& views);
  // The decision's verdicts as the job's rows (moved out of `decision`), each cluster's with the
  // preemptions considered there (the taken first, at most kNotesPerCluster of them).
  Result<void> record_verdicts(JobId job, PlacementDecision& decision,
                               std::vector<PreemptionNote> notes, Millis now);
  // The job fits nowhere: preemption, a backfill hold, and why it waits (an "unschedulable"
  // event when that changed).
  Result<void> wait_for_capacity(JobRow& job, const PlacementRequest& req,
                                 const std::vector<ClusterView>& views, PlacementDecision& decision,
                                 Millis now);
  // The job waits for its data at the chosen cluster; records why.
  Result<void> wait_for_staging(JobRow& job, const std::string& cluster,
                                const std::vector<std::string>& waits, Millis now);
  // The nodes the launch at `cluster` must not use, and the hot spares it takes.
  void fill_launch_nodes(LaunchPlanInput& in, const PlacementRequest& req,
                         const std::vector<ClusterView>& views, const std::string& cluster) const;
  // The clusters as placement sees them: rebuilt from the store only when its capacity epoch
  // moved or the history was refreshed. A change in what the filters look at bumps
  // capacity_version_.
  Result<std::vector<ClusterView>*> cluster_views();
  Result<std::vector<ClusterView>> read_cluster_views();
  // Fingerprints views_ and bumps capacity_version_ when the fingerprint changed.
  void note_capacity();
  // The same after a change to views_[i] alone (a launch there): one cluster's part is made.
  void note_capacity_of(std::size_t i);
  // Could any cluster hold a job of this size at all, were it empty of other waiting jobs'
  // wishes? A necessary condition of every filter, cheap enough to ask of every waiting job.
  bool may_fit(const JobChange& job, const std::vector<ClusterView>& views) const;
  // Team quotas: whether the job would run within its team's quota on some cluster, and
  // whether it may run beyond it (its team borrows, and it allows preemption).
  bool within_quota_somewhere(const JobSpec& job) const;
  bool may_borrow(const JobSpec& job) const;
  // The job's team's room on each cluster, into the request.
  void fill_quota_room(PlacementRequest& req) const;

  PlacementPipeline pipeline_;
  DataStager& staging_;
  HealthJudge& health_;
  SparePool& spares_;

  // Placement state kept between events (placement rounds cost what changed, not the queue).
  WaitingQueue waiting_;
  bool waiting_loaded_ = false;
  std::vector<std::pair<JobId, std::uint64_t>> blocked_marks_;  // this event's, until commit
  std::vector<ClusterView> views_;
  TeamLedger ledger_;  // with views_: what teams hold, when the clusters file has quotas
  std::optional<std::uint64_t> views_epoch_;
  JobHolds holds_;
  std::vector<JobId> held_marks_;  // jobs a rule held in this event, until commit
  // The GPUs our attempts hold per cluster (Store::gpus_in_use), as of the store's gpus_epoch
  // in_use_epoch_: a change to a cluster's row or nodes alone rebuilds the views without them.
  std::map<std::string, GpusInUse> in_use_;
  std::optional<std::uint64_t> in_use_epoch_;
  std::optional<Millis> views_history_at_;
  // Backfill: the GPUs held for the first waiting job that fits nowhere yet, and its place in
  // the queue (a job ahead of it that gets blocked takes the hold over).
  std::optional<HoldPlan> hold_;
  WaitingQueue::Key hold_key_{};
  std::vector<std::string> capacity_fingerprint_;  // a part per cluster, as views_
  std::uint64_t capacity_version_ = 0;
};

}  // namespace orch
