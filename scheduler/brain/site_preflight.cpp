// A site's preflight and the launches that meet the server's own misconfiguration of it
// (attempt_tracker.h; scheduler/model/preflight.h; docs/health.md, "cluster check").
#include "scheduler/brain/attempt_tracker.h"

namespace orch {
namespace {

// A provider's message without the "site NAME: " it starts with (the reason names the cluster).
std::string without_site(const std::string& message, const std::string& cluster) {
  const std::string prefix = "site " + cluster + ": ";
  return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
}

}  // namespace

Result<void> AttemptTracker::note_misconfigured(const std::string& cluster,
                                                const std::string& reason) {
  auto row = store_.cluster(cluster);
  if (!row) return row.error();
  if (!*row) return Ok{};
  auto known = core_.misconfigured.find(cluster);
  const std::string before = known == core_.misconfigured.end() ? "" : known->second;
  if (reason == before) return Ok{};
  if (reason.empty()) {
    core_.misconfigured.erase(cluster);
  } else {
    core_.misconfigured[cluster] = reason;
  }
  ClusterRow c = **row;
  // The message is the preflight's unless the site is silent (its own message says more then).
  if (c.health == SiteHealth::healthy || c.message == before) c.message = reason;
  if (auto r = store_.update_cluster(c); !r) return r;
  const std::string text =
      reason.empty() ? "cluster " + cluster + " passed its preflight: " + "it takes jobs again"
                     : reason;
  return store_.add_event(std::nullopt, std::nullopt, clock_.now_ms(),
                          reason.empty() ? "site-preflight-passed" : "site-misconfigured", text);
}

Result<BrainReply> AttemptTracker::on(const PreflightObserved& e) {
  if (cluster_spec(e.cluster) == nullptr) return BrainReply{};
  const bool was = core_.misconfigured.count(e.cluster) > 0;
  if (auto r = note_misconfigured(e.cluster, misconfigured_reason(e.cluster, e.checks)); !r) {
    return r.error();
  }
  if (was && core_.misconfigured.count(e.cluster) == 0) {
    if (auto r = placer_.place_waiting_jobs(); !r) return r.error();
  }
  BrainReply reply;
  reply.message = misconfigured_reason(e.cluster, e.checks);
  return reply;
}

Result<BrainReply> AttemptTracker::hold_misconfigured(AttemptRow& a, const std::string& why) {
  const std::string reason =
      "cluster " + a.cluster + " misconfigured: " + without_site(why, a.cluster);
  if (auto r = end_attempt(a, ExitCause::site_misconfigured, why); !r) return r.error();
  // What a preflight found says more than the launch's error: it stays.
  if (core_.misconfigured.count(a.cluster) == 0) {
    if (auto r = note_misconfigured(a.cluster, reason); !r) return r.error();
  }
  auto found = store_.job(a.job_id);
  if (!found) return found.error();
  if (!*found || is_terminal((*found)->state)) return BrainReply{};
  JobRow job = **found;
  const Millis now = clock_.now_ms();
  job.next_attempt_ms = now;
  job.reason = reason;
  if (job.state != JobState::pending) {
    if (auto r = store_.set_job_state(job, JobState::pending, now); !r) return r.error();
  } else if (auto r = store_.update_job(job, now); !r) {
    return r.error();
  }
  if (auto r = event(job.id, a.no, "site-misconfigured",
                     "attempt " + std::to_string(a.no) + " was not launched: " + reason +
                         "; the job waits (no restart spent) until the cluster passes "
                         "`orchestrate cluster check " +
                         a.cluster + "`, or runs elsewhere");
      !r) {
    return r.error();
  }
  return BrainReply{};
}

}  // namespace orch
