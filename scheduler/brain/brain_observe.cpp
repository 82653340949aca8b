// The brain: what sites report (launch results, attempt observations, reachability).
#include <algorithm>
#include <map>
#include <set>

#include "scheduler/brain/brain.h"
#include "scheduler/health/quarantine.h"
#include "scheduler/lifecycle/failure_classifier.h"
#include "scheduler/lifecycle/mfu.h"

namespace orch {
namespace {

constexpr std::size_t kBadLinesPerObservation = 3;

}  // namespace

Result<BrainReply> Brain::on(const LaunchCompleted& e) {
  const Millis now = clock_.now_ms();
  if (!e.result.ok() && e.result.error().kind == ErrorKind::unreachable) {
    // Unknown whether it launched: the action stays in the outbox and is retried (find first).
    return BrainReply{};
  }
  if (auto r = store_.mark_action_done(e.outbox_id, now); !r) return r.error();
  auto found = store_.attempt_by_token(e.token);
  if (!found) return found.error();
  if (!*found) return BrainReply{};
  AttemptRow a = **found;

  if (!e.result.ok()) {
    if (a.state == AttemptState::exited) return BrainReply{};
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
    if (auto r = note_resume_choice(a, e.resume); !r) return r.error();
  }
  return BrainReply{};
}

Result<BrainReply> Brain::on(const CancelCompleted& e) {
  if (!e.result.ok()) {
    if (e.result.error().kind == ErrorKind::unreachable) return BrainReply{};  // retried
    auto a = store_.attempt_by_token(e.token);
    if (a && *a) {
      (void)event((*a)->job_id, (*a)->no, "cancel-failed",
                  "cancel on " + (*a)->cluster + " failed: " + e.result.error().message);
    }
  }
  if (auto r = store_.mark_action_done(e.outbox_id, clock_.now_ms()); !r) return r.error();
  return BrainReply{};
}

// The site has the attempt queued or running.
Result<BrainReply> Brain::attempt_seen_running(AttemptRow& a, JobRow& job, bool running) {
  if (a.state == AttemptState::exited) {
    // Declared ended, yet the site has it: keep one copy of the job (brain_reconcile.cpp).
    if (a.cancel_requested) return BrainReply{};
    if (auto r = reconcile_stale(a, running, job); !r) return r.error();
    return BrainReply{};
  }
  if (running && a.state == AttemptState::launching) {
    a.launch_done = true;
    a.running_ms = clock_.now_ms();
    if (auto r = store_.set_attempt_state(a, AttemptState::running, clock_.now_ms()); !r) {
      return r.error();
    }
    if (job.state == JobState::placed) {
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

// The site says the attempt's process ended: why, by the exit and the log's last lines.
Result<BrainReply> Brain::attempt_exited(AttemptRow& a, JobRow& job, const AttemptObserved& e) {
  if (a.state == AttemptState::exited) return settle(a);
  a.site_done = true;
  ExitStatus status = e.exit.value_or(ExitStatus{});
  a.exit_code = status.exit_code;
  a.signal = status.signal;
  FailureEvidence evidence{status, a.cancel_requested || job.state == JobState::cancelled,
                           e.log_tail};
  FailureVerdict verdict = classify_failure(evidence, a.nodes);
  std::string detail = status.detail;
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
  if (auto r = end_attempt(a, verdict.cause, detail); !r) return r.error();
  if (auto r = implicate_nodes(a, verdict.cause, verdict.named_nodes, verdict.evidence); !r) {
    return r.error();
  }
  if (auto r = after_attempt_end(a); !r) return r.error();
  return BrainReply{};
}

Result<BrainReply> Brain::on(const AttemptObserved& e) {
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

  switch (e.phase) {
    case RunPhase::queued:
    case RunPhase::running:
      return attempt_seen_running(a, job, e.phase == RunPhase::running);
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

Result<void> Brain::ingest_reports(AttemptRow& a, const JobRow& job,
                                   const std::vector<ProgressLine>& reports) {
  if (reports.empty()) return store_.update_attempt(a);
  const Millis now = clock_.now_ms();
  const ClusterSpec* cluster = cluster_spec(a.cluster);
  std::optional<double> peak = cluster ? cluster->peak_flops_per_gpu() : std::nullopt;
  std::optional<double> fpt = model_flops_per_token(job.spec.model);
  std::vector<MfuSample> mfu_samples;
  for (const auto& line : reports) {
    if (const auto* p = std::get_if<ProgressReport>(&line)) {
      // Workers re-read output from the start after a restart; steps already seen are skipped.
      if (a.last_step && p->step <= *a.last_step) continue;
      a.last_progress_ms = now;
      if (!a.first_step) a.first_step = p->step;
      a.last_step = p->step;
      ProgressSample sample{a.id, p->step, p->tokens, p->step_time_s, std::nullopt, now};
      if (p->tokens && p->step_time_s) {
        a.tokens_total += static_cast<double>(*p->tokens);
        a.step_time_total += *p->step_time_s;
        sample.mfu =
            compute_mfu(static_cast<double>(*p->tokens), *p->step_time_s, fpt, a.gpus, peak);
      }
      if (auto r = store_.insert_progress(sample); !r) return r;
      if (sample.mfu) mfu_samples.push_back({*sample.mfu, &p->ranks});
    } else {
      const auto& c = std::get<CheckpointReport>(line);
      auto added =
          store_.insert_checkpoint({0, a.job_id, a.id, c.step, c.path, c.save_time_s, now});
      if (!added) return added.error();
      if (*added) {
        if (auto r = event(a.job_id, a.no, "checkpoint",
                           "checkpoint at step " + std::to_string(c.step) + ": " + c.path);
            !r) {
          return r;
        }
        if (auto r = register_checkpoint(a, **added, c.path); !r) return r;
      }
    }
  }
  a.mfu = compute_mfu(a.tokens_total, a.step_time_total, fpt, a.gpus, peak);
  if (auto r = watch_mfu(a, job, mfu_samples); !r) return r;
  return store_.update_attempt(a);
}

Result<BrainReply> Brain::settle(AttemptRow& attempt) {
  if (attempt.site_done) return BrainReply{};
  attempt.site_done = true;
  if (auto r = store_.update_attempt(attempt); !r) return r.error();
  return BrainReply{};
}

// ---- nodes ------------------------------------------------------------------------------

Result<void> Brain::node_event(const std::string& cluster, const std::string& node,
                               const std::string& kind, const std::string& message,
                               const AttemptRow* attempt) {
  NodeEventRow row;
  row.cluster = cluster;
  row.node = node;
  row.at_ms = clock_.now_ms();
  row.kind = kind;
  row.message = message;
  if (attempt) {
    row.job_id = attempt->job_id;
    row.attempt_no = attempt->no;
  }
  if (auto r = store_.add_node_event(row); !r) return r.error();
  if (is_failure_kind(kind)) return judge_node_after_failure(cluster, node);
  return Ok{};
}

Result<void> Brain::record_health(const std::string& cluster, SiteHealth health) {
  return store_.add_health_log({cluster, clock_.now_ms(), health});
}

Result<BrainReply> Brain::on(const InventoryObserved& e) {
  if (!cluster_spec(e.cluster)) return BrainReply{};
  const Millis now = clock_.now_ms();
  auto known = store_.nodes(e.cluster);
  if (!known) return known.error();
  std::map<std::string, const NodeRow*> before;
  for (const auto& n : *known) before[n.name] = &n;
  std::set<std::string> listed;
  for (const auto& n : e.inventory.nodes) {
    listed.insert(n.name);
    // The ledger records changes of health only: a node first seen unhealthy, one that turns
    // unhealthy, one that turns healthy again. An unchanged report records nothing.
    auto was = before.find(n.name);
    const bool first_seen = was == before.end();
    const bool was_healthy = first_seen || was->second->healthy;
    if (was_healthy && !n.healthy) {
      std::string msg = "node " + n.name +
                        (first_seen ? " is unhealthy when first listed: " : " turned unhealthy: ") +
                        (n.reason.empty() ? std::string("the site gives no reason") : n.reason);
      if (auto r = node_event(e.cluster, n.name, "node-unhealthy", msg); !r) return r.error();
    } else if (!was_healthy && n.healthy) {
      std::string msg = "node " + n.name + " is healthy again";
      if (!was->second->reason.empty()) msg += " (was: " + was->second->reason + ")";
      if (auto r = node_event(e.cluster, n.name, "node-healthy", msg); !r) return r.error();
    }
    NodeRow row;
    row.cluster = e.cluster;
    row.name = n.name;
    row.gpus = n.gpus;
    row.healthy = n.healthy;
    row.reason = n.reason;
    row.seen_ms = now;
    if (auto r = store_.upsert_node(row); !r) return r.error();
  }
  // A node the site no longer lists is gone until it is listed again; its history stays.
  for (auto n : *known) {
    if (listed.count(n.name) || !n.healthy) continue;
    n.healthy = false;
    n.reason = "no longer listed by the site";
    if (auto r = node_event(e.cluster, n.name, "node-unhealthy",
                            "node " + n.name + " turned unhealthy: " + n.reason);
        !r) {
      return r.error();
    }
    if (auto r = store_.upsert_node(n); !r) return r.error();
  }
  return BrainReply{};
}

// ---- site reachability ------------------------------------------------------------------

Result<BrainReply> Brain::on(const SiteUnreachable& e) {
  auto row = store_.cluster(e.cluster);
  if (!row) return row.error();
  if (!*row) return BrainReply{};
  ClusterRow c = **row;
  if (c.health == SiteHealth::healthy) {
    c.health = SiteHealth::unreachable;
    c.unreachable_since_ms = clock_.now_ms();
    c.message = e.message;
    if (auto r = store_.update_cluster(c); !r) return r.error();
    if (auto r = record_health(c.name, c.health); !r) return r.error();
    auto live = store_.live_attempts(e.cluster);
    if (!live) return live.error();
    for (const auto& a : *live) {
      // Providers usually name the site in their message already.
      std::string msg = e.message.find(e.cluster) != std::string::npos
                            ? e.message
                            : "site " + e.cluster + " is not answering: " + e.message;
      if (auto r = event(a.job_id, a.no, "site-unreachable", msg); !r) {
        return r.error();
      }
    }
  }
  if (auto r = expire_unreachable_sites(); !r) return r.error();
  return BrainReply{};
}

Result<BrainReply> Brain::on(const SiteReachable& e) {
  auto row = store_.cluster(e.cluster);
  if (!row) return row.error();
  if (!*row || (*row)->health == SiteHealth::healthy) return BrainReply{};
  ClusterRow c = **row;
  c.health = SiteHealth::healthy;
  c.unreachable_since_ms.reset();
  c.message.clear();
  if (auto r = store_.update_cluster(c); !r) return r.error();
  if (auto r = record_health(c.name, c.health); !r) return r.error();
  if (auto r = place_waiting_jobs(); !r) return r.error();
  return BrainReply{};
}

Result<void> Brain::expire_unreachable_sites() {
  const Millis now = clock_.now_ms();
  auto rows = store_.clusters();
  if (!rows) return rows.error();
  for (auto c : *rows) {
    const ClusterSpec* spec = cluster_spec(c.name);
    if (!spec || c.health != SiteHealth::unreachable || !c.unreachable_since_ms) continue;
    auto grace_ms =
        static_cast<Millis>(std::clamp(spec->unreachable_grace_s, 0.0, 86400.0 * 30) * 1000.0);
    if (now - *c.unreachable_since_ms < grace_ms) continue;
    c.health = SiteHealth::down;
    if (auto r = store_.update_cluster(c); !r) return r;
    if (auto r = record_health(c.name, c.health); !r) return r;
    auto live = store_.live_attempts(c.name);
    if (!live) return live.error();
    for (auto a : *live) {
      // Actions for an attempt we give up on are void; if the site ran it anyway, the
      // reconciliation in on(AttemptObserved) or on(LaunchCompleted) stops it.
      if (auto r = store_.mark_actions_done_for_token(a.token, now); !r) return r;
      std::string detail = "site silent for " +
                           std::to_string((now - *c.unreachable_since_ms) / 1000) + "s, grace " +
                           std::to_string(static_cast<long long>(spec->unreachable_grace_s)) + "s";
      if (auto r = end_attempt(a, ExitCause::site_down, detail); !r) return r;
      if (auto r = after_attempt_end(a); !r) return r;
    }
  }
  return Ok{};
}

}  // namespace orch
