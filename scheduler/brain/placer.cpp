// The brain's placing part: the waiting queue, and placing one job (the decision, the staging it
// needs first, and the launch it records). Submitting a job: placer_submit.cpp.
#include "scheduler/brain/placer.h"

#include <algorithm>

#include "scheduler/brain/site_capacity.h"
#include "scheduler/common/text.h"
#include "scheduler/model/launch_request_json.h"
#include "scheduler/placement/cost_objective.h"
#include "scheduler/placement/ever_fits.h"
#include "scheduler/spec/container_support.h"
#include "scheduler/spec/scheduling_section.h"
#include "scheduler/spec/slurm_job_rules.h"
#include "scheduler/spec/submission_rules.h"
#include "scheduler/spec/sweep.h"

#include <charconv>

namespace orch {

Result<void> Placer::load_queue() {
  auto waiting = store_.waiting_jobs();
  if (!waiting) return waiting.error();
  waiting_.reset(*waiting);
  waiting_loaded_ = true;
  return Ok{};
}

void Placer::after_commit(bool committed) {
  if (!committed) {
    // What this event wrote is gone; the queue is read again before the next round, and the
    // hold is decided again as its jobs are tried.
    waiting_loaded_ = false;
    views_epoch_.reset();
    in_use_epoch_.reset();
    hold_.reset();
    holds_.forget();
    return;
  }
  holds_.note_changes(store_.job_changes());  // jobs held on one that ended are woken
  if (!waiting_loaded_) return;
  for (const auto& change : store_.job_changes()) waiting_.apply(change);
  for (const auto& [id, version] : blocked_marks_) waiting_.mark_blocked(id, version);
  blocked_marks_.clear();
  for (JobId id : held_marks_) waiting_.hold(id);
  held_marks_.clear();
  // The held job no longer waits (placed, cancelled, failed): its GPUs are free for all.
  if (hold_ && !waiting_.contains(hold_->held.job)) {
    hold_.reset();
    apply_hold();
  }
}

Result<std::vector<ClusterView>*> Placer::cluster_views() {
  const auto& history = health_.histories();  // may refresh, which changes the views' scores
  const bool fresh = views_epoch_ && *views_epoch_ == store_.capacity_epoch();
  if (fresh && views_history_at_ && health_.histories_at() == *views_history_at_) {
    fill_prices(views_, clock_.now_ms());  // a window's price may have begun (issue 45)
    return &views_;
  }
  if (!fresh) {
    // Capacity moved: the nodes and GPUs are read again. A refreshed history alone (every
    // kHistoryRefreshMs) changes only the scores below, not what the sites hold.
    auto views = read_cluster_views();
    if (!views) return views.error();
    views_ = std::move(*views);
    int fleet_gpus = 0;
    for (auto& v : views_) fleet_gpus += v.spec->nodes * v.spec->gpus_per_node;
    if (core_.scheduling.quotas()) {
      auto uses = store_.team_uses();
      if (!uses) return uses.error();
      ledger_ = TeamLedger(core_.scheduling, fleet_gpus, std::move(*uses));
    }
    views_epoch_ = store_.capacity_epoch();
  }
  for (auto& v : views_) {
    auto h = history.find(v.spec->name);
    v.history = h != history.end() ? h->second : ClusterHistory{};
  }
  views_history_at_ = health_.histories_at();
  fill_prices(views_, clock_.now_ms());
  apply_hold();
  return &views_;
}

void Placer::apply_hold() {
  for (auto& v : views_) {
    v.held.reset();
    if (hold_ && hold_->cluster == v.spec->name) v.held = hold_->held;
  }
  note_capacity();
}

Result<void> Placer::fill_move_costs(PlacementRequest& req, const JobRow& job,
                                     const std::vector<AttemptRow>& attempts) {
  if (attempts.empty()) return Ok{};  // never ran: no checkpoint to carry anywhere
  auto copy = staging_.checkpoint_copy_estimates(job.id);
  if (!copy) return copy.error();
  req.checkpoint_copy_s = std::move(*copy);
  return Ok{};
}

void Placer::fill_backfill(PlacementRequest& req, const JobRow& job) const {
  req.job_id = job.id;
  req.now_ms = clock_.now_ms();
  if (auto limit = job.spec.time_limit_ms()) req.ends_ms = req.now_ms + *limit;
}

namespace {

// One cluster's part of the capacity fingerprint: what the filters look at. Made after every
// launch, so by appends alone into one buffer: no temporary string.
void capacity_part(const ClusterView& v, std::string& out) {
  out.clear();
  out += to_string(v.health);
  out += '|';
  out += to_string(v.admission);
  out += v.misconfigured.empty() ? "|" : "|m|";
  char num[24];
  out.append(num, std::to_chars(num, num + sizeof num, v.gpus_used).ptr);
  out += '|';
  out.append(num, std::to_chars(num, num + sizeof num, v.gpus_foreign).ptr);
  for (const auto& n : v.unhealthy_nodes) (out += "|u:") += n;
  for (const auto& n : v.quarantined_nodes) (out += "|q:") += n;
  // Node sizes (issue 40, the job-shape filter), as their count and sums.
  long long cpus = 0, memory = 0;
  for (const auto& n : v.node_sizes) cpus += n.cpus, memory += n.memory_mb;
  if (!v.node_sizes.empty()) {
    out += "|s:";
    out.append(num, std::to_chars(num, num + sizeof num, v.node_sizes.size()).ptr);
    out += ':';
    out.append(num, std::to_chars(num, num + sizeof num, cpus).ptr);
    out += ':';
    out.append(num, std::to_chars(num, num + sizeof num, memory).ptr);
  }
  if (v.held) {
    out += "|h:";
    out.append(num, std::to_chars(num, num + sizeof num, v.held->job).ptr);
    out += ':';
    out.append(num, std::to_chars(num, num + sizeof num, v.held->spare_gpus).ptr);
    out += ':';
    out.append(num, std::to_chars(num, num + sizeof num, v.held->starts_ms.value_or(-1)).ptr);
  }
}

}  // namespace

void Placer::note_capacity() {
  // A change of it may unblock a waiting job.
  std::vector<std::string> parts(views_.size());
  for (std::size_t i = 0; i < views_.size(); ++i) capacity_part(views_[i], parts[i]);
  if (parts != capacity_fingerprint_) {
    capacity_fingerprint_ = std::move(parts);
    ++capacity_version_;
  }
}

void Placer::note_capacity_of(std::size_t i) {
  if (capacity_fingerprint_.size() != views_.size()) {
    note_capacity();
    return;
  }
  std::string part;
  capacity_part(views_[i], part);
  if (part != capacity_fingerprint_[i]) {
    capacity_fingerprint_[i] = std::move(part);
    ++capacity_version_;
  }
}

bool Placer::within_quota_somewhere(const JobSpec& job) const {
  if (!ledger_.enabled()) return true;
  for (const auto& v : views_) {
    if (ledger_.within(job.team, v.spec->name, job.total_gpus())) return true;
  }
  return false;
}

bool Placer::may_borrow(const JobSpec& job) const {
  return ledger_.may_borrow(job.team) && job.preemption.allowed;
}

void Placer::fill_quota_room(PlacementRequest& req) const {
  if (!ledger_.enabled()) return;
  for (const auto& v : views_) {
    if (auto room = ledger_.room(req.job->team, v.spec->name)) req.quota_room[v.spec->name] = *room;
  }
}

bool Placer::may_fit(const JobChange& job, const std::vector<ClusterView>& views) const {
  const PlacementRequest none;
  for (const auto& v : views) {
    const ClusterSpec& c = *v.spec;
    if (v.health != SiteHealth::healthy || v.admission != Admission::active) continue;
    if (job.gpus_per_node > c.gpus_per_node || job.nodes > c.nodes) continue;
    // A job that lost a node may also take the cluster's ready spares.
    const int spares = static_cast<int>(v.ready_spares.size()) * c.gpus_per_node;
    if (gpus_free(none, v) + spares >= job.nodes * job.gpus_per_node) return true;
  }
  return false;
}

Result<std::vector<ClusterView>> Placer::read_cluster_views() {
  auto rows = store_.clusters();
  if (!rows) return rows.error();
  if (!in_use_epoch_ || *in_use_epoch_ != store_.gpus_epoch()) {
    auto used = store_.gpus_in_use();
    if (!used) return used.error();
    in_use_ = std::move(*used);
    in_use_epoch_ = store_.gpus_epoch();
  }
  std::vector<ClusterView> views;
  for (const auto& spec : clusters_) {
    ClusterView v;
    v.spec = &spec;
    for (const auto& r : *rows) {
      if (r.name != spec.name) continue;
      v.health = r.health;
      v.admission = r.admission;
    }
    if (auto m = core_.misconfigured.find(spec.name); m != core_.misconfigured.end()) {
      v.misconfigured = m->second;
    }
    int at_site = 0;  // ours that the site's own count of busy GPUs includes
    if (auto it = in_use_.find(spec.name); it != in_use_.end()) {
      v.gpus_used = it->second.held;
      at_site = it->second.at_site;
    }
    auto nodes = store_.nodes(spec.name);
    if (!nodes) return nodes.error();
    for (const auto& n : *nodes) {
      if (!n.healthy) v.unhealthy_nodes.push_back(n.name);
      if (n.state != NodeState::active) v.quarantined_nodes.push_back(n.name);
    }
    if (may_hold_spares(spec)) {
      // Hot spares are ours and held (spare_pool.h); a running holder is in the site's count.
      auto spares = store_.live_spares(spec.name);
      if (!spares) return spares.error();
      for (const auto& s : *spares) {
        v.gpus_used += s.gpus;
        v.spare_nodes.push_back(s.node);
        if (s.state != SpareState::ready) continue;
        at_site += s.gpus;
        v.ready_spares.push_back(s.node);
      }
    }
    for (const auto& n : *nodes) {
      if (n.cpus > 0 || n.memory_mb > 0) v.node_sizes.push_back({n.name, n.cpus, n.memory_mb});
    }
    v.gpus_foreign = foreign_gpus(*nodes, spec.gpus_per_node, at_site);
    views.push_back(v);
  }
  return views;
}

Result<void> Placer::place_waiting_jobs() {
  if (!waiting_loaded_) {
    if (auto r = load_queue(); !r) return r;
  }
  for (JobId id : holds_.take_woken(clock_.now_ms())) waiting_.release(id);
  // Nothing waits: the clusters and their history are not read (a fleet of thousands of nodes
  // pays for that on every event otherwise). The first job to wait reads them afresh.
  if (waiting_.size() == 0) return Ok{};
  auto views = cluster_views();
  if (!views) return views.error();
  const auto due = waiting_.due(clock_.now_ms(), capacity_version_,
                                [&](const JobChange& job) { return may_fit(job, **views); });
  // A round tries at most this many jobs; the rest are tried on the next event or tick (a
  // quarter of a second in the server). Right after a restart every waiting job is due at once,
  // and one round for all of them would hold up the commands queued behind it.
  constexpr std::size_t kTriesPerRound = 200;
  std::vector<JobRow> borrowers;  // with quotas: tried after the jobs within their quota
  for (std::size_t i = 0; i < due.size() && i < kTriesPerRound; ++i) {
    const JobId id = due[i];
    auto job = store_.job(id);
    if (!job) return job.error();
    // Placed or ended earlier in this event (the queue follows only after the commit).
    if (!*job || !is_waiting((*job)->state)) continue;
    if (!within_quota_somewhere((*job)->spec)) {
      borrowers.push_back(std::move(**job));
      continue;
    }
    if (auto r = try_place(**job); !r) return r;
  }
  // Fair share among the teams that borrow: the highest priority, then the team with the
  // smallest dominant share (as it stands after each placement), then queue order.
  const auto fair_key = [&](const JobRow& j) {
    return std::pair(-j.spec.priority, ledger_.dominant_share(j.spec.team));
  };
  while (!borrowers.empty()) {
    auto next = borrowers.begin();
    for (auto it = borrowers.begin(); it != borrowers.end(); ++it) {
      if (fair_key(*it) < fair_key(*next)) next = it;
    }
    JobRow job = std::move(*next);
    borrowers.erase(next);
    if (auto r = try_place(job); !r) return r;
  }
  return Ok{};
}

Result<void> Placer::try_place(JobRow& job) {
  const Millis now = clock_.now_ms();
  if (job.next_attempt_ms && *job.next_attempt_ms > now) return Ok{};
  // Held whatever the clusters hold (a job it waits for, issue 45): not tried until woken.
  auto held = holds_.keep_waiting(job, now);
  if (!held) return held.error();
  if (*held) {
    if (is_waiting(job.state)) held_marks_.push_back(job.id);
    return Ok{};
  }
  auto views_now = cluster_views();
  if (!views_now) return views_now.error();
  std::vector<ClusterView>& views = **views_now;
  auto attempts = store_.attempts_of(job.id);
  if (!attempts) return attempts.error();

  auto req = full_request(job, *attempts);
  if (!req) return req.error();
  JobSpec narrowed;  // a dependent runs where the checkpoints it waited for lie (issue 45)
  auto narrows = holds_.narrow_to_checkpoints(job, narrowed);
  if (!narrows) return narrows.error();
  if (*narrows) req->job = &narrowed;
  PlacementDecision decision = choose_cluster(*req, job.spec, views);
  if (!decision.chosen) return wait_for_capacity(job, *req, views, decision, now);
  if (auto r = record_verdicts(job.id, decision, {}, now); !r) return r;

  // A cluster takes it: whatever was held for it elsewhere is free for others again.
  if (hold_ && hold_->held.job == job.id) {
    hold_.reset();
    apply_hold();
  }

  // Data first: a job placed where its datasets or its newest checkpoint are missing waits in
  // `staging` while they are copied (data_transfers.cpp).
  std::map<std::string, std::string> data_env;
  auto waits = staging_.stage_for(job, *decision.chosen, data_env);
  if (!waits) return waits.error();
  if (auto r = holds_.fill_after_env(job, *decision.chosen, data_env); !r) return r;
  auto candidates = staging_.resume_candidates_at(job.id, *decision.chosen);
  if (!candidates) return candidates.error();
  auto ckpt_wait = staging_.stage_checkpoint(job, *decision.chosen, *candidates, *attempts);
  if (!ckpt_wait) return ckpt_wait.error();
  if (ckpt_wait->wait) waits->push_back(*ckpt_wait->wait);
  if (!waits->empty()) return wait_for_staging(job, *decision.chosen, *waits, now);
  LaunchPlanInput in;
  in.job = &job;
  in.attempts = &*attempts;
  in.site = cluster_spec(*decision.chosen);
  if (in.site == nullptr) {
    return make_error(ErrorKind::internal, "placed on unknown cluster " + *decision.chosen);
  }
  in.candidates = std::move(*candidates);
  in.resume_floor_step = ckpt_wait->floor_step;
  in.resume_floor_reason = ckpt_wait->floor_reason;
  in.saved_before = ckpt_wait->saved_before;
  auto save_times = store_.job_save_times(job.id);
  if (!save_times) return save_times.error();
  in.save_times_s = std::move(*save_times);
  in.data_env = std::move(data_env);
  fill_launch_nodes(in, *req, views, *decision.chosen);
  in.now = now;
  return record_launch(job, plan_launch(in));
}

Result<PlacementRequest> Placer::full_request(const JobRow& job,
                                              const std::vector<AttemptRow>& attempts) {
  PlacementRequest req = placement_request(job, attempts);
  fill_backfill(req, job);
  auto staging = staging_.staging_estimates(job.spec);
  if (!staging) return staging.error();
  req.staging_s = std::move(*staging);
  if (auto r = fill_move_costs(req, job, attempts); !r) return r.error();
  fill_quota_room(req);
  req.objective = objective_of(core_.scheduling, job.spec.team);
  return req;
}

PlacementDecision Placer::choose_cluster(PlacementRequest& req, const JobSpec& spec,
                                         std::vector<ClusterView>& views) {
  // With quotas, within the team's quota where it can be; else borrowing idle GPUs, if it may.
  req.within_quota = ledger_.enabled();
  PlacementDecision decision = pipeline_.place(req, views);
  if (!decision.chosen && req.within_quota && may_borrow(spec)) {
    req.within_quota = false;
    decision = pipeline_.place(req, views);
  }
  return decision;
}

Result<void> Placer::record_verdicts(JobId job, PlacementDecision& decision,
                                     std::vector<PreemptionNote> notes, Millis now) {
  // A fleet may run thousands of attempts: a verdict keeps the first few considered on its
  // cluster, the taken first, and how many more there were.
  constexpr std::size_t kNotesPerCluster = 20;
  std::stable_sort(
      notes.begin(), notes.end(),
      [](const PreemptionNote& a, const PreemptionNote& b) { return a.taken > b.taken; });
  std::vector<PlacementVerdictRow> verdicts;
  verdicts.reserve(decision.verdicts.size());
  for (auto& v : decision.verdicts) {
    const bool chosen = decision.chosen && *decision.chosen == v.cluster;
    PlacementVerdictRow row;
    row.job_id = job;
    row.cluster = std::move(v.cluster);
    row.feasible = v.feasible;
    row.reason = std::move(v.reason);
    if (v.feasible) row.score = v.score;
    row.chosen = chosen;
    row.at_ms = now;
    row.parts = std::move(v.parts);
    row.refused_by = std::move(v.refused_by);
    for (auto& n : notes) {
      if (n.victim.cluster != row.cluster) continue;
      if (row.preemptions.size() < kNotesPerCluster) {
        row.preemptions.push_back(std::move(n));
      } else {
        ++row.preemptions_more;
      }
    }
    verdicts.push_back(std::move(row));
  }
  return store_.replace_verdicts(job, verdicts);
}

Result<void> Placer::wait_for_capacity(JobRow& job, const PlacementRequest& req,
                                       const std::vector<ClusterView>& views,
                                       PlacementDecision& decision, Millis now) {
  std::string reason = "waiting for capacity: " + decision.summary();
  // Kept with --queue-anyway (or the clusters changed since): no cluster could ever hold it.
  if (fits_no_cluster(job.spec, views)) {
    reason = "fits no configured cluster, kept for a cluster still to come; " + reason;
  }
  std::vector<PreemptionNote> considered;
  if (auto r = consider_preemption(job, req, views, reason, considered); !r) return r;
  if (auto r = record_verdicts(job.id, decision, std::move(considered), now); !r) return r;
  if (auto r = consider_hold(job, req, views); !r) return r;
  blocked_marks_.emplace_back(job.id, capacity_version_);
  if (reason != job.reason) {
    job.reason = reason;
    if (auto r = store_.update_job(job, now); !r) return r;
    if (auto r = event(job.id, std::nullopt, "unschedulable", reason); !r) return r;
  }
  return Ok{};
}

Result<void> Placer::wait_for_staging(JobRow& job, const std::string& cluster,
                                      const std::vector<std::string>& waits, Millis now) {
  std::string reason = "staging at " + cluster + ": " + join(waits, "; ");
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

void Placer::fill_launch_nodes(LaunchPlanInput& in, const PlacementRequest& req,
                               const std::vector<ClusterView>& views,
                               const std::string& cluster) const {
  for (const auto& v : views) {
    if (v.spec->name != cluster) continue;
    in.exclude_nodes = unusable_nodes(req, v);
    // Hot spares: the ones it takes (with its surviving nodes), and no other spare's node.
    in.spares = spares_to_take(req, v);
    if (!in.spares.empty())
      in.survivors = surviving_nodes(*in.attempts, v.spec->name, in.exclude_nodes);
    for (const auto& n : v.spare_nodes) {
      if (std::find(in.spares.begin(), in.spares.end(), n) == in.spares.end()) {
        in.exclude_nodes.push_back(n);
      }
    }
  }
}

Result<std::optional<std::string>> Placer::better_than_queue(const JobRow& job,
                                                             const AttemptRow& queued) {
  auto views = cluster_views();
  if (!views) return views.error();
  auto attempts = store_.attempts_of(job.id);
  if (!attempts) return attempts.error();
  // As placement_request will ask once the queued attempt is moved: it avoids that cluster, and
  // the queued attempt's own GPUs there still count as used (they are, until it is cancelled).
  PlacementRequest req = placement_request(job, *attempts);
  req.previous_cluster.reset();
  req.avoid_nodes.clear();
  req.avoid_cluster = queued.cluster;
  fill_backfill(req, job);
  auto staging = staging_.staging_estimates(job.spec);
  if (!staging) return staging.error();
  req.staging_s = std::move(*staging);
  if (auto r = fill_move_costs(req, job, *attempts); !r) return r.error();
  fill_quota_room(req);
  req.objective = objective_of(core_.scheduling, job.spec.team);
  req.within_quota = ledger_.enabled() && !may_borrow(job.spec);
  PlacementDecision decision = pipeline_.place(req, **views);
  if (!decision.chosen || *decision.chosen == queued.cluster) {
    return std::optional<std::string>();
  }
  return decision.chosen;
}

Result<void> Placer::record_launch(JobRow& job, LaunchPlan plan) {
  const Millis now = plan.attempt.started_ms;  // the time placing decided at
  if (auto r = call_off_preemptions(job.id); !r) return r;
  AttemptRow& a = plan.attempt;
  // Hot spares it takes: their holders' cancels go into the outbox before its launch (and the
  // views are read afresh: their GPUs are no longer the spares').
  if (auto r = spares_.take(a.cluster, plan.spares, job.id, a.no); !r) return r;
  if (plan.previous) {
    if (auto r = store_.update_attempt(*plan.previous); !r) return r;
  }
  const bool views_current = views_epoch_ && *views_epoch_ == store_.capacity_epoch();
  const bool in_use_current = in_use_epoch_ && *in_use_epoch_ == store_.gpus_epoch();
  const bool borrows = ledger_.enabled() && !ledger_.within(job.spec.team, a.cluster, a.gpus);
  const std::string team_held = borrows ? ledger_.describe(job.spec.team) : std::string();
  job.reason.clear();
  job.next_attempt_ms.reset();
  auto attempt_id = store_.launch_attempt(job, a, JobState::placed, now);
  if (!attempt_id) return attempt_id.error();
  a.id = *attempt_id;
  if (views_current) {
    // The new attempt is the only change since the views were read: count its GPUs here rather
    // than read every cluster and node again for the next job of this round.
    for (std::size_t i = 0; i < views_.size(); ++i) {
      if (views_[i].spec->name != a.cluster) continue;
      views_[i].gpus_used += a.gpus;
      note_capacity_of(i);
    }
    ledger_.add({a.id, job.spec.team, a.cluster, a.gpus});
    views_epoch_ = store_.capacity_epoch();
  }
  if (in_use_current) {  // the same for the GPUs in use: a launching attempt holds, not at_site
    in_use_[a.cluster].held += a.gpus;
    in_use_epoch_ = store_.gpus_epoch();
  }
  // A job placed on the holding cluster that does not end before the held job starts took
  // spare GPUs (try_place gave up the hold of a job it places).
  if (hold_ && hold_->cluster == a.cluster) {
    HeldGpus& h = hold_->held;
    const auto limit = job.spec.time_limit_ms();
    const bool ends_in_time = limit && h.starts_ms && now + *limit <= *h.starts_ms;
    if (!ends_in_time && job.spec.priority <= h.priority) {
      h.spare_gpus = std::max(0, h.spare_gpus - a.gpus);
      apply_hold();
    }
  }
  OutboxRow row;
  row.cluster = a.cluster;
  row.kind = ActionKind::launch;
  row.token = a.token;
  row.payload = launch_request_to_json(plan.launch);
  row.created_ms = now;
  if (auto r = store_.enqueue(row); !r) return r.error();

  std::string msg = plan.placed_message;
  if (borrows) msg += "; on borrowed GPUs, the first taken back (" + team_held + ")";
  return event(job.id, a.no, "placed", msg);
}

}  // namespace orch
