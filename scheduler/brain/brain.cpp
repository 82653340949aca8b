// The brain: commands (submit, cancel), placement, and what follows an attempt's end.
// Observations from sites are handled in brain_observe.cpp.
#include "scheduler/brain/brain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "scheduler/brain/brain_text.h"
#include "scheduler/common/text.h"
#include "scheduler/lifecycle/job_stats.h"
#include "scheduler/lifecycle/restart_policy.h"
#include "scheduler/model/launch_request_json.h"

namespace orch {
namespace {

std::string seconds_text(Millis ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  return buf;
}

template <typename T>
Error missing(const char* what, T id) {
  return make_error(ErrorKind::not_found, std::string("no ") + what + " " + std::to_string(id));
}

}  // namespace

Brain::Brain(Store& store, const Clock& clock, std::vector<ClusterSpec> clusters,
             PlacementPipeline pipeline)
    : store_(store),
      clock_(clock),
      clusters_(std::move(clusters)),
      pipeline_(std::move(pipeline)) {}

Result<void> Brain::start() {
  return store_.transaction([&]() -> Result<void> {
    const Millis now = clock_.now_ms();
    for (const auto& c : clusters_) {
      Admission admission = c.burn_in.on_join ? Admission::pending : Admission::active;
      auto added = store_.ensure_cluster(c.name, admission, now);
      if (!added) return added.error();
      if (*added) {
        if (auto r = record_health(c.name, SiteHealth::healthy); !r) return r;
      }
    }
    if (auto r = forget_removed_clusters(); !r) return r;
    // The queue is read once here and then follows the job rows the brain writes.
    auto waiting = store_.waiting_jobs();
    if (!waiting) return waiting.error();
    waiting_.reset(*waiting);
    waiting_loaded_ = true;
    return Ok{};
  });
}

Result<void> Brain::forget_removed_clusters() {
  auto watched = store_.live_attempts(std::nullopt);
  if (!watched) return watched.error();
  for (auto a : *watched) {
    if (cluster_spec(a.cluster)) continue;
    if (auto r = store_.mark_actions_done_for_token(a.token, clock_.now_ms()); !r) return r;
    a.site_done = true;
    if (auto r = end_attempt(a, ExitCause::lost,
                             "cluster " + a.cluster + " is no longer in the configuration");
        !r) {
      return r;
    }
    if (auto r = after_attempt_end(a); !r) return r;
  }
  return Ok{};
}

const ClusterSpec* Brain::cluster_spec(const std::string& name) const {
  return find_cluster(clusters_, name);
}

Result<BrainReply> Brain::handle(const BrainEvent& event) {
  Result<BrainReply> reply = BrainReply{};
  blocked_marks_.clear();
  auto tx = store_.transaction([&]() -> Result<void> {
    reply = std::visit([&](const auto& e) { return on(e); }, event);
    if (!reply) return reply.error();
    return Ok{};
  });
  after_commit(tx.ok());
  if (!tx) return tx.error();
  return reply;
}

void Brain::after_commit(bool committed) {
  if (!committed) {
    // What this event wrote is gone; the queue is read again before the next round.
    waiting_loaded_ = false;
    views_epoch_.reset();
    return;
  }
  if (!waiting_loaded_) return;
  for (const auto& change : store_.job_changes()) waiting_.apply(change);
  for (const auto& [id, version] : blocked_marks_) waiting_.mark_blocked(id, version);
  blocked_marks_.clear();
}

Result<void> Brain::event(JobId job, std::optional<int> attempt_no, const std::string& kind,
                          const std::string& message) {
  return store_.add_event(job, attempt_no, clock_.now_ms(), kind, message);
}

// ---- commands ---------------------------------------------------------------------------

Result<BrainReply> Brain::on(const SubmitJob& e) {
  for (const auto& name : e.spec.allowed_clusters) {
    if (!cluster_spec(name)) {
      std::string known;
      for (const auto& c : clusters_) {
        if (!known.empty()) known += ", ";
        known += c.name;
      }
      std::string msg = "placement.allowed names unknown cluster \"" + name + "\"";
      msg += "; configured clusters: ";
      msg += known;
      return make_error(ErrorKind::invalid, msg);
    }
  }
  const Millis now = clock_.now_ms();
  JobRow job;
  job.name = e.spec.name;
  job.spec = e.spec;
  job.created_ms = job.updated_ms = now;
  auto id = store_.insert_job(job);
  if (!id) return id.error();
  job.id = *id;
  if (auto r = event(job.id, std::nullopt, "submitted",
                     "submitted: " + std::to_string(e.spec.nodes) + " node(s) x " +
                         std::to_string(e.spec.gpus_per_node) + " GPU(s)");
      !r) {
    return r.error();
  }
  if (auto r = try_place(job); !r) return r.error();
  return BrainReply{job.id, std::string(to_string(job.state))};
}

Result<BrainReply> Brain::on(const CancelJob& e) {
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

Result<void> Brain::request_cancel(AttemptRow& attempt, const std::string& why) {
  attempt.cancel_requested = true;
  if (auto r = store_.update_attempt(attempt); !r) return r;
  OutboxRow row;
  row.cluster = attempt.cluster;
  row.kind = ActionKind::cancel;
  row.token = attempt.token;
  row.payload = {{"reason", why}};
  row.created_ms = clock_.now_ms();
  if (auto r = store_.enqueue(row); !r) return r.error();
  return event(
      attempt.job_id, attempt.no, "cancel-requested",
      "asked " + attempt.cluster + " to stop attempt " + std::to_string(attempt.no) + ": " + why);
}

Result<BrainReply> Brain::on(const Tick&) {
  if (auto r = expire_unreachable_sites(); !r) return r.error();
  if (auto r = throttle_transfers(); !r) return r.error();
  if (auto r = start_due_audits(false, {}); !r) return r.error();
  if (auto r = sweep_replication(); !r) return r.error();
  if (auto r = detect_hangs(); !r) return r.error();
  if (auto r = start_due_burn_ins(); !r) return r.error();
  if (auto r = start_release_probes(); !r) return r.error();
  if (auto r = place_waiting_jobs(); !r) return r.error();
  return BrainReply{};
}

// ---- placement --------------------------------------------------------------------------

Result<std::vector<ClusterView>*> Brain::cluster_views() {
  const auto& history = histories();  // may refresh, which changes the views' scores
  if (views_epoch_ && *views_epoch_ == store_.capacity_epoch() && views_history_at_ &&
      histories_at_ms_ == *views_history_at_) {
    return &views_;
  }
  auto views = read_cluster_views();
  if (!views) return views.error();
  views_ = std::move(*views);
  for (auto& v : views_) {
    if (auto h = history.find(v.spec->name); h != history.end()) v.history = h->second;
  }
  views_epoch_ = store_.capacity_epoch();
  views_history_at_ = histories_at_ms_;
  note_capacity();
  return &views_;
}

void Brain::note_capacity() {
  // What the filters look at; a change of it may unblock a waiting job.
  std::string fingerprint;
  for (const auto& v : views_) {
    fingerprint += v.spec->name + '|' + std::string(to_string(v.health)) + '|' +
                   std::string(to_string(v.admission)) + '|' + std::to_string(v.gpus_used);
    for (const auto& n : v.unhealthy_nodes) fingerprint += "|u:" + n;
    for (const auto& n : v.quarantined_nodes) fingerprint += "|q:" + n;
    fingerprint += '\n';
  }
  if (fingerprint != capacity_fingerprint_) {
    capacity_fingerprint_ = std::move(fingerprint);
    ++capacity_version_;
  }
}

bool Brain::may_fit(const JobChange& job, const std::vector<ClusterView>& views) const {
  const PlacementRequest none;
  for (const auto& v : views) {
    const ClusterSpec& c = *v.spec;
    if (v.health != SiteHealth::healthy || v.admission != Admission::active) continue;
    if (job.gpus_per_node > c.gpus_per_node || job.nodes > c.nodes) continue;
    if (gpus_free(none, v) >= job.nodes * job.gpus_per_node) return true;
  }
  return false;
}

Result<std::vector<ClusterView>> Brain::read_cluster_views() {
  auto rows = store_.clusters();
  if (!rows) return rows.error();
  auto used = store_.gpus_in_use();
  if (!used) return used.error();
  std::vector<ClusterView> views;
  for (const auto& spec : clusters_) {
    ClusterView v;
    v.spec = &spec;
    for (const auto& r : *rows) {
      if (r.name != spec.name) continue;
      v.health = r.health;
      v.admission = r.admission;
    }
    if (auto it = used->find(spec.name); it != used->end()) v.gpus_used = it->second;
    auto nodes = store_.nodes(spec.name);
    if (!nodes) return nodes.error();
    for (const auto& n : *nodes) {
      if (!n.healthy) v.unhealthy_nodes.push_back(n.name);
      if (n.state != NodeState::active) v.quarantined_nodes.push_back(n.name);
    }
    views.push_back(v);
  }
  return views;
}

Result<void> Brain::place_waiting_jobs() {
  if (!waiting_loaded_) {
    auto waiting = store_.waiting_jobs();
    if (!waiting) return waiting.error();
    waiting_.reset(*waiting);
    waiting_loaded_ = true;
  }
  auto views = cluster_views();
  if (!views) return views.error();
  const auto due = waiting_.due(clock_.now_ms(), capacity_version_,
                                [&](const JobChange& job) { return may_fit(job, **views); });
  // A round tries at most this many jobs; the rest are tried on the next event or tick (a
  // quarter of a second in the server). Right after a restart every waiting job is due at once,
  // and one round for all of them would hold up the commands queued behind it.
  constexpr std::size_t kTriesPerRound = 200;
  for (std::size_t i = 0; i < due.size() && i < kTriesPerRound; ++i) {
    const JobId id = due[i];
    auto job = store_.job(id);
    if (!job) return job.error();
    // Placed or ended earlier in this event (the queue follows only after the commit).
    if (!*job || !is_waiting((*job)->state)) continue;
    if (auto r = try_place(**job); !r) return r;
  }
  return Ok{};
}

Result<void> Brain::try_place(JobRow& job) {
  const Millis now = clock_.now_ms();
  if (job.next_attempt_ms && *job.next_attempt_ms > now) return Ok{};
  auto views_now = cluster_views();
  if (!views_now) return views_now.error();
  std::vector<ClusterView>& views = **views_now;
  auto attempts = store_.attempts_of(job.id);
  if (!attempts) return attempts.error();

  PlacementRequest req = placement_request(job, *attempts);
  auto staging = staging_estimates(job.spec);
  if (!staging) return staging.error();
  req.staging_s = std::move(*staging);
  PlacementDecision decision = pipeline_.place(req, views);

  std::vector<PlacementVerdictRow> verdicts;
  for (const auto& v : decision.verdicts) {
    verdicts.push_back({job.id, v.cluster, v.feasible, v.reason,
                        v.feasible ? std::optional<double>(v.score) : std::nullopt,
                        decision.chosen && *decision.chosen == v.cluster, now});
  }
  if (auto r = store_.replace_verdicts(job.id, verdicts); !r) return r;

  if (!decision.chosen) {
    std::string reason = "waiting for capacity: " + decision.summary();
    blocked_marks_.emplace_back(job.id, capacity_version_);
    if (reason != job.reason) {
      job.reason = reason;
      if (auto r = store_.update_job(job, now); !r) return r;
      if (auto r = event(job.id, std::nullopt, "unschedulable", reason); !r) return r;
    }
    return Ok{};
  }

  // Data first: a job placed where its datasets or its newest checkpoint are missing waits in
  // `staging` while they are copied (brain_transfer.cpp).
  std::map<std::string, std::string> data_env;
  auto waits = stage_for(job, *decision.chosen, data_env);
  if (!waits) return waits.error();
  auto candidates = resume_candidates_at(job.id, *decision.chosen);
  if (!candidates) return candidates.error();
  auto ckpt_wait = stage_checkpoint(job, *decision.chosen, *candidates);
  if (!ckpt_wait) return ckpt_wait.error();
  if (*ckpt_wait) waits->push_back(**ckpt_wait);
  if (!waits->empty()) {
    std::string reason = "staging at " + *decision.chosen + ": " + join(*waits, "; ");
    if (job.state != JobState::staging) {
      job.reason = reason;
      if (auto r = store_.set_job_state(job, JobState::staging, now); !r) return r;
      return event(job.id, std::nullopt, "staging", reason);
    }
    if (reason != job.reason) {
      job.reason = reason;
      if (auto r = store_.update_job(job, now); !r) return r;
    }
    return Ok{};
  }
  LaunchPlanInput in;
  in.job = &job;
  in.attempts = &*attempts;
  in.site = cluster_spec(*decision.chosen);
  if (in.site == nullptr) {
    return make_error(ErrorKind::internal, "placed on unknown cluster " + *decision.chosen);
  }
  in.candidates = std::move(*candidates);
  in.data_env = std::move(data_env);
  for (const auto& v : views) {
    if (v.spec->name == *decision.chosen) in.exclude_nodes = unusable_nodes(req, v);
  }
  in.now = now;
  return record_launch(job, plan_launch(in), views);
}

Result<void> Brain::record_launch(JobRow& job, LaunchPlan plan, std::vector<ClusterView>& views) {
  const Millis now = plan.attempt.started_ms;  // the time placing decided at
  AttemptRow& a = plan.attempt;
  if (plan.previous) {
    if (auto r = store_.update_attempt(*plan.previous); !r) return r;
  }
  const bool views_current = views_epoch_ && *views_epoch_ == store_.capacity_epoch();
  auto attempt_id = store_.insert_attempt(a);
  if (!attempt_id) return attempt_id.error();
  a.id = *attempt_id;
  if (views_current) {
    // The new attempt is the only change since the views were read: count its GPUs here rather
    // than read every cluster and node again for the next job of this round.
    for (auto& v : views) {
      if (v.spec->name == a.cluster) v.gpus_used += a.gpus;
    }
    views_epoch_ = store_.capacity_epoch();
    note_capacity();
  }
  OutboxRow row;
  row.cluster = a.cluster;
  row.kind = ActionKind::launch;
  row.token = a.token;
  row.payload = launch_request_to_json(plan.launch);
  row.created_ms = now;
  if (auto r = store_.enqueue(row); !r) return r.error();

  job.reason.clear();
  job.next_attempt_ms.reset();
  if (auto r = store_.set_job_state(job, JobState::placed, now); !r) return r;
  std::string msg = plan.placed_message;
  if (plan.from_the_start) {
    // A job that saved checkpoints yet starts over says why: none has a good copy here.
    auto saved = store_.latest_checkpoint(job.id);
    if (!saved) return saved.error();
    if (*saved) msg += " (no checkpoint has a good copy at " + a.cluster + ")";
  }
  return event(job.id, a.no, "placed", msg);
}

// ---- after an attempt ends --------------------------------------------------------------

Result<void> Brain::end_attempt(AttemptRow& attempt, ExitCause cause, const std::string& detail) {
  attempt.cause = cause;
  if (auto r = store_.set_attempt_state(attempt, AttemptState::exited, clock_.now_ms()); !r) {
    return r;
  }
  std::string msg = "attempt " + std::to_string(attempt.no) + " on " + attempt.cluster +
                    " ended: " + std::string(to_string(cause));
  if (attempt.exit_code) msg += ", exit code " + std::to_string(*attempt.exit_code);
  if (attempt.signal) msg += ", signal " + std::to_string(*attempt.signal);
  if (attempt.last_step) msg += ", at step " + std::to_string(*attempt.last_step);
  if (cause == ExitCause::node_lost) {
    msg += attempt.nodes.empty() ? std::string(", on nodes the site did not name")
                                 : ", on node(s) " + join(attempt.nodes, ", ");
  }
  if (!detail.empty()) msg += " (" + detail + ")";
  if (auto r = event(attempt.job_id, attempt.no, "attempt-ended", msg); !r) return r;
  if (cause != ExitCause::node_lost) return Ok{};
  // The node ledger: the failure goes on every node the attempt ran on.
  for (const auto& node : attempt.nodes) {
    std::string what = "node failure under job " + std::to_string(attempt.job_id) + " attempt " +
                       std::to_string(attempt.no);
    if (!attempt.site_job_id.empty()) what += " (site job " + attempt.site_job_id + ")";
    if (attempt.nodes.size() > 1) what += ", which ran on " + join(attempt.nodes, ", ");
    if (!detail.empty()) what += ": " + detail;
    if (auto r = node_event(attempt.cluster, node, "node-failure", what, &attempt); !r) return r;
  }
  return Ok{};
}

Result<void> Brain::after_attempt_end(const AttemptRow& attempt) {
  const Millis now = clock_.now_ms();
  auto found = store_.job(attempt.job_id);
  if (!found) return found.error();
  if (!*found) return Ok{};
  JobRow job = **found;
  if (is_terminal(job.state)) return Ok{};
  auto attempts = store_.attempts_of(job.id);
  if (!attempts) return attempts.error();
  for (const auto& other : *attempts) {
    // Another attempt of this job is still live (a reconciled duplicate): it carries the job.
    if (other.state != AttemptState::exited && !other.cancel_requested) return Ok{};
  }

  AfterExit next =
      decide_after_exit(job.spec.restart, job.infra_restarts, job.user_restarts, attempt.cause);
  switch (next.verdict) {
    case AfterExit::Verdict::ignore:
      return Ok{};
    case AfterExit::Verdict::succeed: {
      JobStats stats = compute_job_stats(*attempts, now);
      job.reason.clear();
      if (auto r = store_.set_job_state(job, JobState::succeeded, now); !r) return r;
      char buf[160];
      std::snprintf(
          buf, sizeof buf, "succeeded after %zu attempt(s); steps lost %lld; ETTR %s",
          attempts->size(), static_cast<long long>(stats.steps_lost),
          stats.ettr ? (std::to_string(std::lround(*stats.ettr * 100)) + "%").c_str() : "n/a");
      return event(job.id, attempt.no, "succeeded", buf);
    }
    case AfterExit::Verdict::fail:
      job.reason = next.reason;
      if (auto r = store_.set_job_state(job, JobState::failed, now); !r) return r;
      return event(job.id, attempt.no, "failed", "failed: " + next.reason);
    case AfterExit::Verdict::resume: {
      (next.spends_infra ? job.infra_restarts : job.user_restarts) += 1;
      job.next_attempt_ms = now + next.delay_ms;
      job.reason = "resuming after " + next.reason;
      if (auto r = store_.set_job_state(job, JobState::resuming, now); !r) return r;
      // A job resumes only from a copy at the site it is placed on, so the message names, for
      // each site, the newest checkpoint with a copy there that is good or not yet listed
      // ("step 500 at alpha; step 450 at beta"); the placed event says which one it got.
      auto ckpts = store_.checkpoints_of(job.id);
      if (!ckpts) return ckpts.error();
      auto copies = store_.replicas_of_job(job.id);
      if (!copies) return copies.error();
      std::map<std::int64_t, std::vector<std::string>> sites_by_step;  // newest per site
      std::set<std::string> seen;
      for (auto it = ckpts->rbegin(); it != ckpts->rend(); ++it) {
        for (const auto& r : *copies) {
          if (r.checkpoint_id != it->id || seen.count(r.cluster) != 0 ||
              (r.state != ReplicaState::verified && r.state != ReplicaState::present)) {
            continue;
          }
          seen.insert(r.cluster);
          sites_by_step[it->step].push_back(r.cluster);
        }
      }
      std::string from = "from the start (no checkpoint has a good copy yet)";
      if (!sites_by_step.empty()) {
        from = "from the newest checkpoint with a good copy where it is placed: ";
        for (auto it = sites_by_step.rbegin(); it != sites_by_step.rend(); ++it) {
          if (it != sites_by_step.rbegin()) from += "; ";
          from += "step " + std::to_string(it->first) + " at " + join(it->second, " and ");
        }
      }
      if (auto r = event(
              job.id, attempt.no, "resuming",
              "resuming in " + seconds_text(next.delay_ms) + " (" + next.reason + ") " + from);
          !r) {
        return r;
      }
      return try_place(job);
    }
  }
  return Ok{};
}

}  // namespace orch
