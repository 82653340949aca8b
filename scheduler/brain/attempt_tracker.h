#pragma once
// The brain's attempts part: what sites report of the attempts they run (launch results,
// observations with progress and checkpoints, exits, cancellations), a site's reachability, and
// what follows an attempt's end (retry, resume, succeed or fail, by the job's restart policy).
// Launch and observation are in attempt_tracker.cpp; endings, hangs and site outages in
// attempt_endings.cpp. It hands node evidence to the health part, checkpoints to the data
// registry (the check before a launch to the data verifier), duplicates to the reconciler, and a
// job that resumes to placing.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"
#include "scheduler/brain/data_registry.h"
#include "scheduler/brain/data_verifier.h"
#include "scheduler/brain/health_judge.h"
#include "scheduler/brain/placer.h"
#include "scheduler/brain/reconciler.h"

namespace orch {

class AttemptTracker : BrainPart {
 public:
  AttemptTracker(BrainCore& core, HealthJudge& health, DataRegistry& registry,
                 DataVerifier& verifier, Placer& placer, Reconciler& reconciler)
      : BrainPart(core),
        health_(health),
        registry_(registry),
        verifier_(verifier),
        placer_(placer),
        reconciler_(reconciler) {}

  // A person cancels a job: every live attempt is asked to stop.
  Result<BrainReply> on(const CancelJob& e);
  Result<BrainReply> on(const LaunchCompleted& e);
  Result<BrainReply> on(const CancelCompleted& e);
  Result<BrainReply> on(const AttemptObserved& e);
  Result<BrainReply> on(const SiteUnreachable& e);
  Result<BrainReply> on(const SiteReachable& e);
  // A site's preflight (site_preflight.cpp): a failed check keeps the cluster out of placement
  // and in its message; one that passes again lets it take jobs (placed at once).
  Result<BrainReply> on(const PreflightObserved& e);

  // Tick: sites silent past their grace are down (their attempts end); attempts silent past
  // their hang_after are hung (ended, stopped, their nodes implicated).
  Result<void> expire_unreachable_sites();
  Result<void> detect_hangs();
  // At start: ends what runs on clusters no longer in the configuration (nobody can watch them).
  Result<void> forget_removed_clusters();

  // A person drains, activates or retires a cluster (cluster_admission.cpp). Retiring moves its
  // live attempts at once; draining lets them run until their next checkpoint.
  Result<BrainReply> on(const SetClusterAdmission& e);
  // Tick: live attempts on a draining cluster that saved a checkpoint since the drain began
  // (verified at some site) are moved: stopped, and their jobs placed again elsewhere.
  Result<void> move_off_draining();
  // Tick: attempts asked to make room for a job of higher priority (Placer::consider_preemption)
  // are stopped once they saved a checkpoint since the request, or once their grace is over,
  // or at once when they were not running yet.
  Result<void> advance_preemptions();
  // Tick: attempts still queued at their site past their job's max_queue_s are moved to a
  // cluster that can run them now (queue_timeout: no restart spent), when one can.
  Result<void> move_off_long_queues();
  // Tick: attempts whose job's time_limit has passed since their placement are stopped
  // (time_limit: the job resumes from its checkpoint, as after a provider's time limit), so
  // that the GPUs backfill counted on are free when it said (docs/scheduling.md).
  Result<void> stop_past_time_limit();

 private:
  Result<BrainReply> attempt_seen_running(AttemptRow& a, JobRow& job, bool running,
                                          const std::string& waiting);
  // While its launched attempt waits at the site, the job's reason is the site's words
  // ("queued at kube: Kueue: couldn't assign flavors ..."); written only when they changed, and
  // back to none once the site says nothing more (or runs it).
  Result<void> note_site_wait(JobRow& job, const AttemptRow& a, const std::string& waiting);
  Result<BrainReply> attempt_exited(AttemptRow& a, JobRow& job, const AttemptObserved& e);
  Result<void> ingest_reports(AttemptRow& attempt, const JobRow& job,
                              const std::vector<ProgressLine>& reports);
  // A checkpoint line: registered when its path lies inside the attempt's checkpoint directory
  // (model/checkpoint_dir.h; in its normal form), else a `bad-progress-line` event and nothing
  // else (issue 37). `refused` counts this observation's refusals, to bound their events.
  Result<void> ingest_checkpoint(const AttemptRow& attempt, const CheckpointReport& report,
                                 std::size_t& refused);
  // The site confirmed an ended attempt is gone: stop watching it.
  Result<BrainReply> settle(AttemptRow& attempt);
  // Ends the attempt (its row, its event, the node ledger for a node failure). last_heard: the
  // site's last sign of life of what failed (its failed task's last heartbeat, the site's last
  // answer), when known; with its last progress line it is where detection starts.
  Result<void> end_attempt(AttemptRow& attempt, ExitCause cause, const std::string& detail,
                           std::optional<Millis> last_heard = std::nullopt);
  // The brain's own verdict on a live attempt (a hang, a straggler): it ends here with `cause`,
  // is asked to stop (SIGTERM first), the nodes the cause implicates get their ledger entries,
  // and the job goes on as after any end.
  Result<void> stop_attempt(AttemptRow& attempt, ExitCause cause, const std::string& detail,
                            const std::string& cancel_why);
  // stop_attempt for each of these attempts whose job is not over and for which detail_of
  // gives a detail (nullopt: leave it be); the cancel says why_prefix + the detail.
  Result<void> stop_each(
      std::vector<AttemptRow> attempts, ExitCause cause, const std::string& why_prefix,
      const std::function<std::optional<std::string>(const AttemptRow&, const JobRow&)>& detail_of);
  // A node confirmed a straggler (health.exclude_stragglers): end the attempt, stop it, and
  // run the job again without that node.
  Result<void> stop_for_straggler(AttemptRow& attempt, const std::string& node);
  // An attempt has ended (its row already says how): decide what the job does next.
  Result<void> after_attempt_end(const AttemptRow& attempt);
  // Where a resuming job can resume from, for its "resuming" event: a job resumes only from a
  // copy at the site it is placed on, so this names, for each site, the newest checkpoint with a
  // copy there that is good or not yet listed ("step 500 at alpha; step 450 at beta"); the
  // placed event says which one it got.
  Result<std::string> describe_resume_points(JobId job);
  // The site's check left only checkpoints below the launch's resume floor, so nothing ran: the
  // copies it rejected are marked, the attempt ends (cancelled, costing the job no restart) and
  // the job is placed again at once, which stages the newer copy first (data_stager.h).
  Result<BrainReply> resume_bounced(AttemptRow& attempt, const LaunchCompleted& e);
  // Ends a live attempt that did nothing wrong (cancelled, no restart spent), asks its site to
  // stop it, and places its job again at once (a cluster drained or retired under it).
  Result<void> move_attempt(AttemptRow& attempt, const std::string& why);
  // Ends an attempt that did nothing wrong (bounced, moved, preempted) with `cause`, and sends
  // its job back to placing at once without spending a restart; the job's event is `kind`,
  // saying `why`.
  Result<void> step_aside(AttemptRow& attempt, ExitCause cause, const std::string& kind,
                          const std::string& why);
  // A launch failed on the server's own configuration of the site (ErrorKind::misconfigured:
  // its key file, credentials, storage root): the attempt ends site_misconfigured, the cluster
  // takes no jobs until a preflight passes, and the job waits in `pending` with the reason,
  // without spending a restart (site_preflight.cpp).
  Result<BrainReply> hold_misconfigured(AttemptRow& attempt, const std::string& why);
  // Records `reason` ("" when it passes) as the cluster's misconfiguration: its message and a
  // fleet event when it changed.
  Result<void> note_misconfigured(const std::string& cluster, const std::string& reason);
  // One attempt asked to make room: stopped when it saved, its grace is over, or it never ran;
  // true when it was stopped.
  Result<bool> advance_preemption(AttemptRow& attempt);

  HealthJudge& health_;
  DataRegistry& registry_;
  DataVerifier& verifier_;
  Placer& placer_;
  Reconciler& reconciler_;
};

}  // namespace orch
