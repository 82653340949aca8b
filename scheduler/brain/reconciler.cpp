// The brain: one copy of a job at a time. A site that comes back after the brain gave up on it
// (its attempts ended with site_down) may still run, or queue, the attempt the brain declared
// ended. Exactly one attempt may carry a job: decide which from progress, say why in a
// "reconciled" event, and stop the other. The rules are in scheduler/lifecycle/duplicates.h and
// docs/architecture.md.
#include "scheduler/brain/reconciler.h"
#include "scheduler/lifecycle/duplicates.h"
#include "scheduler/lifecycle/job_stats.h"

namespace orch {
namespace {

std::string name_of(const AttemptRow& a) {
  return "attempt " + std::to_string(a.no) + " on " + a.cluster;
}

// How far an attempt got, for people: "at step 812", "still launching, resuming from step 800".
std::string progress_text(const AttemptRow& a) {
  if (a.last_step) return "at step " + std::to_string(*a.last_step);
  std::string from = a.resumed_from_step
                         ? "resuming from step " + std::to_string(*a.resumed_from_step)
                         : std::string("starting from the beginning");
  if (a.state == AttemptState::launching) return "still launching, " + from;
  return "with no step reported, " + from;
}

// What the stale attempt did while the brain had given up on it.
std::string stale_text(const AttemptRow& stale, bool running) {
  if (!running) return name_of(stale) + " is queued again at " + stale.cluster;
  return name_of(stale) + " kept running while " + stale.cluster + " was unreachable and is " +
         progress_text(stale);
}

}  // namespace

Result<void> Reconciler::reconcile_stale(AttemptRow& stale, bool running, JobRow& job) {
  const std::string found = name_of(stale) + " was found " + (running ? "running" : "queued") +
                            " at " + stale.cluster + " after it was declared ended";
  if (is_terminal(job.state)) {
    return drop_stale(
        stale,
        found + ", but the job is already " + std::string(to_string(job.state)) + "; cancelling it",
        "found running after the job ended");
  }
  if (stale.cause != ExitCause::site_down) {
    return drop_stale(stale,
                      found + " (" + std::string(to_string(stale.cause)) + "); cancelling it",
                      "found running after it was declared ended");
  }
  auto attempts = store_.attempts_of(job.id);
  if (!attempts) return attempts.error();
  std::optional<AttemptRow> live;
  for (const auto& other : *attempts) {
    if (other.id == stale.id || other.state == AttemptState::exited || other.cancel_requested) {
      continue;
    }
    live = other;  // the newest live attempt: the job's replacement
  }
  if (live) return reconcile_duplicate(stale, running, *live, job);
  if (job.state == JobState::resuming || job.state == JobState::staging) {
    return reconcile_waiting(stale, running, job);
  }
  return drop_stale(stale,
                    found + ", and the job is " + std::string(to_string(job.state)) +
                        " without it; cancelling it",
                    "found running after it was declared ended");
}

Result<void> Reconciler::reconcile_duplicate(AttemptRow& stale, bool running, AttemptRow& live,
                                             JobRow& job) {
  DuplicateVerdict verdict = decide_duplicate(stale, running, live);
  const std::string stale_part = "duplicate: " + stale_text(stale, running);
  if (!verdict.keep_stale) {
    // The live copy carries the job; what the stale one did past the checkpoint the live one
    // resumed from is lost (it may have gone further while the site was silent).
    stale.steps_lost = steps_lost_between(stale, live.resumed_from_step);
    std::string why =
        stale_part + "; " + name_of(live) + " is " + progress_text(live) + " and keeps the job";
    if (running && verdict.stale_progress && verdict.live_progress &&
        *verdict.stale_progress == *verdict.live_progress) {
      why += " (a tie keeps the replacement)";
    } else if (running && !verdict.stale_progress) {
      why += " (the stale copy's progress is unknown)";
    }
    why += "; cancelling " + name_of(stale);
    return drop_stale(stale, why, "duplicate: " + name_of(live) + " carries the job");
  }
  // The stale copy is further: it carries the job again, and every step of the replacement
  // is thrown away.
  live.steps_lost = steps_lost_between(live, std::nullopt);
  std::string why = stale_part + "; cancelling " + name_of(live) + " " + progress_text(live);
  if (auto r = reinstate(stale, AttemptState::running, job, why); !r) return r;
  return request_cancel(live, "duplicate: " + name_of(stale) + " is further and carries the job");
}

Result<void> Reconciler::reconcile_waiting(AttemptRow& stale, bool running, JobRow& job) {
  const std::string dropped = "; it carries the job again and the pending resume is dropped";
  if (running) {
    return reinstate(stale, AttemptState::running, job,
                     stale_text(stale, true) + ", and no other attempt had started" + dropped);
  }
  // A queued copy starts from the checkpoint it was launched with. Keep it (and its place in
  // the site's queue) only when that is the job's latest; else a new placement resumes further.
  auto ckpt = store_.latest_checkpoint(job.id);
  if (!ckpt) return ckpt.error();
  std::optional<std::int64_t> latest;
  if (*ckpt) latest = (*ckpt)->step;
  if (!latest || (stale.resumed_from_step && *stale.resumed_from_step >= *latest)) {
    std::string from = latest ? "from step " + std::to_string(*latest) + ", the latest checkpoint"
                              : std::string("from the beginning, as the job has no checkpoint");
    return reinstate(stale, AttemptState::launching, job,
                     stale_text(stale, false) + " and would resume " + from + dropped +
                         " (keeping its place in the queue)");
  }
  stale.steps_lost = steps_lost_between(stale, latest);
  std::string from = stale.resumed_from_step
                         ? "from step " + std::to_string(*stale.resumed_from_step)
                         : std::string("from the beginning");
  return drop_stale(stale,
                    stale_text(stale, false) + " but would resume " + from +
                        " while the job has a checkpoint at step " + std::to_string(*latest) +
                        "; cancelling it, the pending resume starts from the newer checkpoint",
                    "queued copy of a job that resumes from a newer checkpoint");
}

Result<void> Reconciler::reinstate(AttemptRow& stale, AttemptState to, JobRow& job,
                                   const std::string& why) {
  const Millis now = clock_.now_ms();
  stale.steps_lost = 0;  // it goes on: nothing it did will be done again
  if (auto r = store_.reinstate_attempt(stale, to); !r) return r;
  if (job.state == JobState::resuming || job.state == JobState::staging) {
    job.next_attempt_ms.reset();
    job.reason.clear();
    if (auto r = store_.set_job_state(job, JobState::placed, now); !r) return r;
  }
  if (to == AttemptState::running && job.state == JobState::placed) {
    if (auto r = store_.set_job_state(job, JobState::running, now); !r) return r;
  }
  return event(job.id, stale.no, "reconciled", why);
}

Result<void> Reconciler::drop_stale(AttemptRow& stale, const std::string& why,
                                    const std::string& cancel_why) {
  if (auto r = event(stale.job_id, stale.no, "reconciled", why); !r) return r;
  return request_cancel(stale, cancel_why);
}

}  // namespace orch
