// The brain's attempts part: a job cancelled by request, and what sites report of attempts
// (launch results, cancellations, observations with progress, checkpoints and exits).
#include <algorithm>
#include <map>
#include <set>

#include "scheduler/brain/attempt_tracker.h"
#include "scheduler/brain/io_stall.h"
#include "scheduler/common/utf8.h"
#include "scheduler/health/quarantine.h"
#include "scheduler/lifecycle/error_excerpt.h"
#include "scheduler/lifecycle/failure_classifier.h"
#include "scheduler/lifecycle/hang_policy.h"
#include "scheduler/lifecycle/mfu.h"
#include "scheduler/model/checkpoint_dir.h"

namespace orch {
namespace {

constexpr std::size_t kBadLinesPerObservation = 3;

// How a job's reason starts while its attempt waits at `cluster` in the site's words.
std::string queued_at(const std::string& cluster) {
  return "queued at " + cluster + ": ";
}

template <typename T>
Error missing(const char* what, T id) {
  return make_error(ErrorKind::not_found, std::string("no ") + what + " " + std::to_string(id));
}

// Why a launch that came back unlaunched never ran: the checkpoints its resume check found gone
// or changed, then what the site worker said ("cancelled before it was launched", the launch's
// error).
std::string not_launched_why(const LaunchCompleted& e) {
  std::string said = e.result.error().message;
  const std::string prefix = "not launched: ";
  if (said.rfind(prefix, 0) == 0) said.erase(0, prefix.size());
  if (!e.resume.bounced && said.rfind("cancelled", 0) != 0) said = "the launch failed: " + said;
  std::string why;
  for (const auto& r : e.resume.rejected) {
    why += (why.empty() ? "" : "; ") + std::string("its checkpoint at step ") +
           std::to_string(r.step) + (r.missing ? " was gone" : " failed its check") +
           (r.why.empty() ? "" : " (" + r.why + ")");
  }
  return why.empty() ? said : why + "; " + said;
}

}  // namespace

Result<BrainReply> AttemptTracker::on(const CancelJob& e) {
  auto job = store_.job(e.job_id);
  if (!job) return job.error();
  if (!*job) return missing("job", e.job_id);
  JobRow& j = **job;
  if (is_terminal(j.state)) {
    return make_error(ErrorKind::conflict, "job " + std::to_string(j.id) + " is already " +
                                               std::string(to_string(j.state)) +
                                               "; there is nothing to cancel");
  }
  j.reason = "cancelled by request";
  j.next_attempt_ms.reset();
  if (auto r = store_.set_job_state(j, JobState::cancelled, clock_.now_ms()); !r) return r.error();
  auto attempts = store_.attempts_of(j.id);
  if (!attempts) return attempts.error();
  for (auto& a : *attempts) {
    if (a.state == AttemptState::exited) continue;
    if (auto r = request_cancel(a, "job cancelled"); !r) return r.error();
  }
  if (auto r = event(j.id, std::nullopt, "cancelled", "cancelled by request"); !r) return r.error();
  return BrainReply{j.id, std::string(to_string(j.state))};
}

Result<BrainReply> AttemptTracker::on(const LaunchCompleted& e) {
  const Millis now = clock_.now_ms();
  if (!e.result.ok() && e.result.error().kind == ErrorKind::unreachable) {
    // Unknown whether it launched: the action stays in the outbox and is retried (launch is
    // idempotent per token).
    return BrainReply{};
  }
  if (auto r = store_.mark_action_done(e.outbox_id, now); !r) return r.error();
  auto found = store_.attempt_by_token(e.token);
  if (!found) return found.error();
  if (!*found) return BrainReply{};
  AttemptRow a = **found;

  if (!e.result.ok()) {
    // Nothing was launched (issue 42): the attempt says why, and is not one of the job's tries.
    if (!a.launch_done && !a.running_ms && a.not_launched.empty()) {
      a.not_launched = not_launched_why(e);
      if (auto r = store_.update_attempt(a); !r) return r.error();
    }
    if (a.state == AttemptState::exited) return BrainReply{};
    if (e.resume.bounced && !a.cancel_requested) return resume_bounced(a, e);
    if (e.result.error().kind == ErrorKind::misconfigured && !a.cancel_requested) {
      return hold_misconfigured(a, e.result.error().message);
    }
    // A launch the worker skipped because the attempt was cancelled first is a cancellation.
    ExitCause cause = a.cancel_requested ? ExitCause::cancelled : ExitCause::launch_failed;
    if (auto r = end_attempt(a, cause, e.result.error().message); !r) return r.error();
    if (auto r = after_attempt_end(a); !r) return r.error();
    return BrainReply{};
  }

  if (a.state == AttemptState::exited) {
    // We gave up on this attempt (its site was silent past the grace, or it was cancelled)
    // but the site ran it after all: stop it so the job never runs twice.
    if (!a.cancel_requested) {
      if (auto r = request_cancel(a, "launched after it was given up"); !r) return r.error();
    }
    return BrainReply{};
  }
  a.launch_done = true;
  a.site_job_id = e.result->site_job_id;
  if (!e.result->nodes.empty()) a.nodes = e.result->nodes;
  if (auto r = store_.update_attempt(a); !r) return r.error();
  std::string msg = (e.adopted ? "adopted attempt " : "launched attempt ") + std::to_string(a.no) +
                    " on " + a.cluster + " (site job " + a.site_job_id + ")";
  if (e.adopted) msg += ": it was launched before a restart";
  if (!e.result->submit_command.empty()) msg += "; submitted as: " + e.result->submit_command;
  if (auto r = event(a.job_id, a.no, e.adopted ? "adopted" : "launched", msg); !r) return r.error();
  if (!e.adopted) {
    if (auto r = verifier_.note_resume_choice(a, e.resume); !r) return r.error();
  }
  return BrainReply{};
}

Result<BrainReply> AttemptTracker::on(const CancelCompleted& e) {
  if (!e.result.ok()) {
    if (e.result.error().kind == ErrorKind::unreachable) return BrainReply{};  // retried
    auto a = store_.attempt_by_token(e.token);
    if (a && *a) {
      const std::string what = e.signalled ? "save request" : "cancel";
      (void)event((*a)->job_id, (*a)->no, e.signalled ? "signal-failed" : "cancel-failed",
                  what + " on " + (*a)->cluster + " failed: " + e.result.error().message);
    }
  }
  if (auto r = store_.mark_action_done(e.outbox_id, clock_.now_ms()); !r) return r.error();
  return BrainReply{};
}

// The site has the attempt queued or running.
Result<BrainReply> AttemptTracker::attempt_seen_running(AttemptRow& a, JobRow& job, bool running,
                                                        const std::string& waiting) {
  if (a.state == AttemptState::exited) {
    // Declared ended, yet the site has it: keep one copy of the job (reconciler.cpp).
    if (a.cancel_requested) return BrainReply{};
    if (auto r = reconciler_.reconcile_stale(a, running, job); !r) return r.error();
    return BrainReply{};
  }
  if (!running && a.state == AttemptState::launching && job.state == JobState::placed) {
    if (auto r = note_site_wait(job, a, waiting); !r) return r.error();
    return BrainReply{};
  }
  if (running && a.state == AttemptState::launching) {
    a.launch_done = true;
    a.running_ms = clock_.now_ms();
    if (auto r = store_.set_attempt_state(a, AttemptState::running, clock_.now_ms()); !r) {
      return r.error();
    }
    if (job.state == JobState::placed) {
      if (job.reason.rfind(queued_at(a.cluster), 0) == 0) job.reason.clear();  // runs now
      if (auto r = store_.set_job_state(job, JobState::running, clock_.now_ms()); !r) {
        return r.error();
      }
      if (auto r = event(job.id, a.no, "running", "running on " + a.cluster); !r) {
        return r.error();
      }
    }
  }
  return BrainReply{};
}

Result<void> AttemptTracker::note_site_wait(JobRow& job, const AttemptRow& a,
                                            const std::string& waiting) {
  const std::string prefix = queued_at(a.cluster);
  const std::string shown = shown_words(waiting, kSiteWordsMax);
  std::string reason;
  if (!shown.empty()) {
    reason = prefix + shown;
  } else if (job.reason.rfind(prefix, 0) != 0) {
    return Ok{};  // the site says nothing, and the reason is not its words: left as it is
  }
  if (reason == job.reason) return Ok{};  // the same words as the last poll's: nothing to write
  const bool first = job.reason.rfind(prefix, 0) != 0;
  job.reason = reason;
  if (auto r = store_.update_job(job, clock_.now_ms()); !r) return r;
  // The first words of each wait go into the job's history too; later changes only the reason.
  if (!first || reason.empty()) return Ok{};
  return event(job.id, a.no, "queued-at-site", reason);
}

// The site says the attempt's process ended: why, by the exit and the log's last lines.
Result<BrainReply> AttemptTracker::attempt_exited(AttemptRow& a, JobRow& job,
                                                  const AttemptObserved& e) {
  if (a.state == AttemptState::exited) return settle(a);
  a.site_done = true;
  ExitStatus status = e.exit.value_or(ExitStatus{});
  a.exit_code = status.exit_code;
  a.signal = status.signal;
  a.failed_node = status.failed_node;
  FailureEvidence evidence{status, a.cancel_requested || job.state == JobState::cancelled,
                           e.log_tail};
  FailureVerdict verdict = classify_failure(evidence, a.nodes);
  if (is_failure_cause(verdict.cause)) {
    // What failed, in the job's own words (lifecycle/error_excerpt.h).
    const ClusterSpec* cluster = cluster_spec(a.cluster);
    ExcerptInput in{
        verdict, status, e.log_tail,
        CommandPlace{job.spec.shell, !job.spec.workdir.sha256.empty(), job.spec.container.image,
                     job.spec.container.workdir, cluster ? cluster->provider : std::string()}};
    if (in.status.failed_node.empty() && a.nodes.size() == 1) in.status.failed_node = a.nodes[0];
    a.error_excerpt = build_error_excerpt(in);
  } else {
    // A stop orchestrate asked for (a cancel) failed nowhere: the task the site saw die first
    // only died of it, and no node is named.
    a.failed_node.clear();
  }
  // A gang's words ("task 0 on alpha-n0 failed first") name no failure when none was.
  std::string detail = is_failure_cause(verdict.cause) ? status.detail : "";
  // A log signature says what it matched; the exit code and provider words already show.
  const bool from_log =
      !e.log_tail.empty() &&
      std::any_of(e.log_tail.begin(), e.log_tail.end(), [&](const std::string& line) {
        return !verdict.evidence.empty() &&
               line.find(verdict.evidence.substr(0, 40)) != std::string::npos;
      });
  if (from_log) {
    detail += (detail.empty() ? "" : "; ") + verdict.rule + ": " + verdict.evidence;
  }
  if (auto r = end_attempt(a, verdict.cause, detail, status.last_heard_ms); !r) return r.error();
  // A gang's failure names the node whose task failed first, when the log names none.
  std::vector<std::string> named = verdict.named_nodes;
  if (named.empty() && !a.failed_node.empty()) named.push_back(a.failed_node);
  if (auto r = health_.implicate_nodes(a, verdict.cause, named, verdict.evidence); !r) {
    return r.error();
  }
  if (auto r = after_attempt_end(a); !r) return r.error();
  return BrainReply{};
}

Result<BrainReply> AttemptTracker::on(const AttemptObserved& e) {
  auto found = store_.attempt_by_token(e.token);
  if (!found) return found.error();
  if (!*found) return BrainReply{};
  AttemptRow a = **found;
  auto job_found = store_.job(a.job_id);
  if (!job_found) return job_found.error();
  if (!*job_found) return BrainReply{};
  JobRow job = **job_found;

  if (a.nodes.empty() && !e.nodes.empty()) a.nodes = e.nodes;
  if (auto r = ingest_reports(a, job, e.reports); !r) return r.error();
  for (std::size_t i = 0; i < e.bad_lines.size() && i < kBadLinesPerObservation; ++i) {
    if (auto r = event(a.job_id, a.no, "bad-progress-line", e.bad_lines[i]); !r) return r.error();
  }
  if (auto r = raise_io_stalls(core_, a, e.alerts); !r) return r.error();  // once per save
  // Asked to make room and still running: its checkpoint line may have just come.
  if (a.preempt_for && e.phase == RunPhase::running) {
    auto stopped = advance_preemption(a);
    if (!stopped) return stopped.error();
    if (*stopped) return BrainReply{};
  }

  switch (e.phase) {
    case RunPhase::queued:
    case RunPhase::running:
      return attempt_seen_running(a, job, e.phase == RunPhase::running, e.waiting);
    case RunPhase::exited:
      return attempt_exited(a, job, e);
    case RunPhase::unknown:
      if (a.state == AttemptState::exited) return settle(a);
      // Before the launch is confirmed the site may simply not have it yet.
      if (!a.launch_done) return BrainReply{};
      a.site_done = true;
      // A provider may purge a run as it cancels it (Kubernetes deletes the Job and its pods):
      // gone after our cancel is a cancellation, not a loss.
      if (auto r = end_attempt(a, a.cancel_requested ? ExitCause::cancelled : ExitCause::lost,
                               "the site no longer knows this attempt");
          !r) {
        return r.error();
      }
      if (auto r = after_attempt_end(a); !r) return r.error();
      return BrainReply{};
  }
  return BrainReply{};
}

Result<void> AttemptTracker::ingest_reports(AttemptRow& a, const JobRow& job,
                                            const std::vector<ProgressLine>& reports) {
  if (reports.empty()) return store_.update_attempt(a);
  const Millis now = clock_.now_ms();
  const ClusterSpec* cluster = cluster_spec(a.cluster);
  std::optional<double> peak = cluster ? cluster->peak_flops_per_gpu() : std::nullopt;
  std::optional<double> fpt = model_flops_per_token(job.spec.model);
  std::vector<HealthJudge::MfuSample> mfu_samples;
  // For the hang limit: the steps' own times when they report them, else the time between
  // this observation's progress and the previous one's over the steps in between.
  const std::optional<Millis> seen_before = a.last_progress_ms;
  const std::optional<std::int64_t> step_before = a.last_step;
  bool step_times_reported = false;
  std::size_t refused = 0;
  for (const auto& line : reports) {
    if (const auto* p = std::get_if<ProgressReport>(&line)) {
      // Workers re-read output from the start after a restart; steps already seen are skipped.
      if (a.last_step && p->step <= *a.last_step) continue;
      if (p->step_time_s) {
        a.hang_after_ms = note_step_time(a.hang_watch, a.hang_after_ms, *p->step_time_s);
        step_times_reported = true;
      }
      a.last_progress_ms = now;
      if (!a.first_progress_ms) a.first_progress_ms = now;
      if (!a.first_step) a.first_step = p->step;
      a.last_step = p->step;
      SeriesStep sample{p->step, p->loss, p->tokens, p->step_time_s, std::nullopt, now};
      if (p->tokens && p->step_time_s) {
        a.tokens_total += static_cast<double>(*p->tokens);
        a.step_time_total += *p->step_time_s;
        auto mfu = compute_mfu(static_cast<double>(*p->tokens), *p->step_time_s, fpt, a.gpus, peak);
        // Above 100%, or while the attempt is flagged, a step's MFU is no measurement.
        sample.mfu = counted_mfu(mfu, a.mfu_flag);
        if (mfu) mfu_samples.push_back({sample.mfu, *p->step_time_s, &p->ranks});
      }
      if (auto r = store_.add_series_step(a.id, *a.first_step, sample); !r) return r;
    } else if (const auto* c = std::get_if<CheckpointReport>(&line)) {
      if (auto r = ingest_checkpoint(a, *c, refused); !r) return r;
    }  // a checkpoint_start: the agent times the save (io_stall); nothing to store
  }
  if (!step_times_reported && seen_before && step_before && a.last_step &&
      *a.last_step > *step_before && now > *seen_before) {
    const double per_step = static_cast<double>(now - *seen_before) / 1000.0 /
                            static_cast<double>(*a.last_step - *step_before);
    a.hang_after_ms = note_step_time(a.hang_watch, a.hang_after_ms, per_step);
  }
  // Work over time: total tokens over total step time (never a mean of per-step MFUs); the
  // health judge flags it, and keeps it null, when it cannot be a measurement.
  a.mfu = compute_mfu(a.tokens_total, a.step_time_total, fpt, a.gpus, peak);
  std::vector<std::string> stragglers;
  if (auto r = health_.watch_mfu(a, job, mfu_samples, &stragglers); !r) return r;
  if (auto r = store_.update_attempt(a); !r) return r;
  if (stragglers.empty() || !job.spec.health.exclude_stragglers) return Ok{};
  return stop_for_straggler(a, stragglers.front());
}

Result<void> AttemptTracker::ingest_checkpoint(const AttemptRow& a, const CheckpointReport& c,
                                               std::size_t& refused) {
  // Only a path inside the job's own directory is the job's to have listed, copied and deleted:
  // another user's directory, named or reached through "..", is never registered.
  // A node's own copy must lie in that node's directory, on a node of the attempt.
  const bool local = c.tier == CheckpointTier::local;
  auto dir = registry_.tier_dir(a, c);
  auto path = dir ? confine_path(c.path, *dir) : Result<std::string>(dir.error());
  if (!path) {
    if (++refused > kBadLinesPerObservation) return Ok{};
    return event(a.job_id, a.no, "bad-progress-line",
                 "checkpoint at step " + std::to_string(c.step) +
                     " not registered: " + path.error().message + "; write checkpoints under " +
                     (local ? "$ORCH_LOCAL_CHECKPOINT_DIR" : "$ORCH_CHECKPOINT_DIR"));
  }
  // The other tier of a checkpoint already reported at this step: a copy of it.
  auto tier_copy = registry_.add_tier_copy(a, c, *path);
  if (!tier_copy) return tier_copy.error();
  if (*tier_copy) {
    return event(a.job_id, a.no, "checkpoint-copy",
                 "checkpoint at step " + std::to_string(c.step) + " also " +
                     (local ? "on node " + c.node + "'s own disk: " : "on shared storage: ") +
                     *path);
  }
  auto added =
      store_.insert_checkpoint({0, a.job_id, a.id, c.step, *path, c.save_time_s, clock_.now_ms()});
  if (!added) return added.error();
  if (!*added) return Ok{};
  if (auto r = event(a.job_id, a.no, "checkpoint",
                     "checkpoint at step " + std::to_string(c.step) + ": " + *path +
                         (local ? " (on node " + c.node + "'s own disk)" : ""));
      !r) {
    return r;
  }
  return registry_.register_checkpoint(a, **added, *path, c.node);
}

Result<void> AttemptTracker::stop_for_straggler(AttemptRow& a, const std::string& node) {
  if (a.state == AttemptState::exited || a.cancel_requested) return Ok{};
  // As with a hang: the attempt ends here and is asked to stop (SIGTERM first, so it can save a
  // checkpoint); the next one avoids the node (placement_request) and stays on the cluster
  // when the cluster has room without it.
  a.failed_node = node;
  const std::string detail = "node " + node + " confirmed a straggler by per-rank step times";
  return stop_attempt(a, ExitCause::straggler, detail, "straggler: " + detail);
}

Result<BrainReply> AttemptTracker::settle(AttemptRow& attempt) {
  if (attempt.site_done) return BrainReply{};
  attempt.site_done = true;
  if (auto r = store_.update_attempt(attempt); !r) return r.error();
  return BrainReply{};
}

}  // namespace orch
