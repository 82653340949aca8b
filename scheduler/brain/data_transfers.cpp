// The brain's data movement (issue 5): checkpoint replication and retention (the plan is
// scheduler/data/replication_plan.h), transfers as the transfer worker reports them, MFU-aware
// throttling (scheduler/data/throttle.h), and staging a job's data before its launch.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>

#include "scheduler/brain/brain_text.h"
#include "scheduler/brain/data_keeper.h"
#include "scheduler/data/replication_plan.h"
#include "scheduler/data/staging.h"
#include "scheduler/data/throttle.h"

namespace orch {
namespace {

using brain_text::base36;

double cap_of(const ClusterSpec* s) {
  return s != nullptr && s->data.bwlimit_mb_s > 0 ? s->data.bwlimit_mb_s * 1e6 : 0.0;
}

// The tighter of two caps, where 0 means none.
double tighter(double a, double b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

constexpr Millis kSweepEveryMs = 10'000;

double bandwidth_of(const std::vector<TransferRow>& done) {
  std::vector<CopySample> samples;
  samples.reserve(done.size());
  for (const auto& t : done) samples.push_back({t.copied_bytes, t.copy_seconds});
  return estimate_bandwidth(samples);
}

}  // namespace

Result<std::set<std::string>> DataKeeper::usable_sites() {
  auto rows = store_.clusters();
  if (!rows) return rows.error();
  std::set<std::string> usable;
  for (const auto& row : *rows) {
    const ClusterSpec* spec = cluster_spec(row.name);
    if (!lists_storage_at(spec) || row.health != SiteHealth::healthy) continue;
    usable.insert(row.name);
  }
  return usable;
}

Result<double> DataKeeper::bandwidth_between(const std::string& a, const std::string& b) {
  auto done = store_.done_transfers(a, b, 10);
  if (!done) return done.error();
  return bandwidth_of(*done);
}

Result<std::int64_t> DataKeeper::start_transfer(const ReplicaRow& source, const std::string& to,
                                                const std::string& dst_path, const std::string& why,
                                                std::int64_t bytes) {
  const Millis now = clock_.now_ms();
  // The destination's copy row: a new one, or the lost/corrupt one being replaced.
  std::vector<ReplicaRow> existing;
  if (source.checkpoint_id) {
    auto rs = store_.replicas_of_checkpoint(*source.checkpoint_id);
    if (!rs) return rs.error();
    existing = std::move(*rs);
  } else {
    auto rs = store_.replicas_of_dataset(source.dataset);
    if (!rs) return rs.error();
    existing = std::move(*rs);
  }
  ReplicaRow dst;
  for (const auto& r : existing) {
    if (r.cluster == to && on_shared_storage(r)) dst = r;
  }
  const bool replace = dst.id != 0;
  if (replace && dst.state == ReplicaState::refused) {
    // A copy there would go through the link that leads out of its directory.
    return make_error(ErrorKind::conflict, "the copy at " + to + " (" + dst.path +
                                               ") is refused: " + dst.detail +
                                               "; nothing is copied there");
  }
  const bool retry_with_checksum = replace && dst.state == ReplicaState::corrupt;
  dst.checkpoint_id = source.checkpoint_id;
  dst.dataset = source.dataset;
  dst.cluster = to;
  if (!replace || dst.state == ReplicaState::deleted) dst.path = dst_path;
  if (dst.confined_to.empty()) {
    // Recorded with the copy: orchestrate's replica directory there, or the job's own directory
    // when the copy goes back to the path the job wrote.
    auto within = confinement_of(dst);
    if (!within) return within.error();
    dst.confined_to = *within;
  }
  dst.state = ReplicaState::copying;
  dst.detail = "being copied from " + source.cluster;
  dst.updated_ms = now;
  if (replace) {
    if (auto r = store_.update_replica(dst); !r) return r.error();
  } else {
    auto id = store_.insert_replica(dst);
    if (!id) return id.error();
    dst.id = *id;
  }
  TransferRow t;
  t.checkpoint_id = source.checkpoint_id;
  t.dataset = source.dataset;
  t.replica_id = dst.id;
  t.src_cluster = source.cluster;
  t.src_path = source.path;
  t.dst_cluster = to;
  t.dst_path = dst.path;
  auto manifest = registered_manifest(source);
  if (!manifest) return manifest.error();
  t.directory = *manifest && (*manifest)->directory;
  t.state = TransferState::queued;
  t.why = why + (retry_with_checksum ? " (the last copy there was corrupt)" : "");
  t.bytes_total = bytes;
  t.base_cap_bps = tighter(cap_of(cluster_spec(source.cluster)), cap_of(cluster_spec(to)));
  t.cap_bps = t.base_cap_bps;
  t.created_ms = now;
  auto id = store_.insert_transfer(t);
  if (!id) return id.error();
  return *id;
}

// ---- replication and retention ----------------------------------------------------------------

Result<void> DataKeeper::replicate_job(JobId job_id) {
  auto job = store_.job(job_id);
  if (!job) return job.error();
  if (!*job) return Ok{};
  const ReplicationSpec& policy = (*job)->spec.checkpoint.replicate;
  if (!policy.enabled) return Ok{};
  // A checkpoint whose copies are all deleted or missing is neither usable nor anything to
  // delete: the plan is made of those that still have a copy, however many the job saved.
  auto ckpts = store_.checkpoints_with_copies(job_id);
  if (!ckpts) return ckpts.error();
  if (ckpts->empty()) return Ok{};
  auto copies = store_.replicas_of_checkpoints_with_copies(job_id);
  if (!copies) return copies.error();
  auto active = store_.transfers(true, 10000);
  if (!active) return active.error();
  auto in = replication_input(policy, *ckpts, *copies, *active);
  if (!in) return in.error();
  const ReplicationPlan plan = plan_replication(*in);
  if (auto r = start_replica_copies(job_id, plan, *ckpts, *copies, *active); !r) return r;
  if (auto r = delete_replicas(job_id, plan, *ckpts, *copies); !r) return r;
  return retire_node_copies(job_id, *ckpts, *copies, policy.keep, plan);
}

Result<ReplicationInput> DataKeeper::replication_input(const ReplicationSpec& policy,
                                                       const std::vector<CheckpointRow>& ckpts,
                                                       const std::vector<ReplicaRow>& copies,
                                                       const std::vector<TransferRow>& active) {
  auto usable = usable_sites();
  if (!usable) return usable.error();
  ReplicationInput in;
  in.policy = policy;
  in.usable_sites = *usable;
  std::set<std::int64_t> ids;
  for (const auto& c : ckpts) {
    ids.insert(c.id);
    CheckpointView v;
    v.id = c.id;
    v.step = c.step;
    v.saved_at = c.cluster;
    for (const auto& r : copies) {
      // The node tier is not a site's copy: lost with its node, read on it only.
      if (r.checkpoint_id == c.id && on_shared_storage(r)) {
        v.replicas.push_back({r.cluster, r.state});
      }
    }
    in.checkpoints.push_back(std::move(v));
  }
  for (const auto& t : active) {
    if (t.checkpoint_id && ids.count(*t.checkpoint_id) != 0) {
      in.in_flight.insert({*t.checkpoint_id, t.dst_cluster});
    }
  }
  // done_transfers reads both directions, so each pair is read once and serves both.
  for (auto a = usable->begin(); a != usable->end(); ++a) {
    for (auto b = std::next(a); b != usable->end(); ++b) {
      auto done = store_.done_transfers(*a, *b, 10);
      if (!done) return done.error();
      if (done->empty()) continue;
      const double bps = bandwidth_of(*done);
      in.bandwidth[{*a, *b}] = bps;
      in.bandwidth[{*b, *a}] = bps;
    }
  }
  return in;
}

Result<void> DataKeeper::start_replica_copies(JobId job_id, const ReplicationPlan& plan,
                                              const std::vector<CheckpointRow>& ckpts,
                                              const std::vector<ReplicaRow>& copies,
                                              const std::vector<TransferRow>& active) {
  std::map<std::int64_t, const CheckpointRow*> by_id;
  for (const auto& c : ckpts) by_id[c.id] = &c;
  // One copy of a job's checkpoints to a site at a time: when it is verified the plan runs
  // again and copies the newest then, rather than every checkpoint of a fast-saving job.
  std::set<std::string> busy_destinations;
  for (const auto& t : active) {
    if (t.checkpoint_id && by_id.count(*t.checkpoint_id) != 0)
      busy_destinations.insert(t.dst_cluster);
  }
  for (const auto& copy : plan.copies) {
    if (busy_destinations.count(copy.to) != 0) continue;
    const CheckpointRow* c = by_id[copy.checkpoint_id];
    const ClusterSpec* to = cluster_spec(copy.to);
    if (c == nullptr || to == nullptr) continue;
    const ReplicaRow* source = nullptr;
    for (const auto& r : copies) {
      if (r.checkpoint_id == c->id && r.cluster == copy.from && on_shared_storage(r) &&
          r.state == ReplicaState::verified) {
        source = &r;
      }
    }
    if (source == nullptr) continue;
    // Back to the site that saved it: to the path the job wrote (it may resume from there).
    std::string dst_path = copy.to == c->cluster
                               ? c->path
                               : replica_path(to->checkpoints_dir(), job_id, c->step, c->path);
    auto id = start_transfer(*source, copy.to, dst_path, copy.why, c->bytes.value_or(0));
    if (!id) return id.error();
    if (auto r = event(job_id, std::nullopt, "replication-started",
                       "copying the checkpoint at step " + std::to_string(c->step) + " from " +
                           copy.from + " to " + copy.to + " (transfer " + std::to_string(*id) +
                           "): " + copy.why);
        !r) {
      return r;
    }
  }
  return Ok{};
}

Result<void> DataKeeper::delete_replicas(JobId job_id, const ReplicationPlan& plan,
                                         const std::vector<CheckpointRow>& ckpts,
                                         const std::vector<ReplicaRow>& copies) {
  for (const auto& del : plan.deletes) {
    for (const auto& r : copies) {
      if (r.checkpoint_id != del.checkpoint_id || r.cluster != del.cluster) continue;
      auto removed = remove_copy(r, del.why);
      if (!removed) return removed.error();
      if (!*removed) continue;
      std::int64_t step = 0;
      for (const auto& c : ckpts) {
        if (c.id == del.checkpoint_id) step = c.step;
      }
      const std::string where = r.cluster + (r.node.empty() ? "" : " (node " + r.node + ")");
      if (auto s = event(job_id, std::nullopt, "checkpoint-deleted",
                         "deleting the checkpoint at step " + std::to_string(step) + " at " +
                             where + ": " + del.why);
          !s) {
        return s;
      }
    }
  }
  return Ok{};
}

Result<bool> DataKeeper::remove_copy(ReplicaRow r, const std::string& why) {
  if (r.state == ReplicaState::deleted || r.state == ReplicaState::refused) return false;
  // The site deletes only inside this directory, after resolving links (issue 37); a copy
  // with none to confine it (its cluster is no longer configured) is left alone.
  auto within = confinement_of(r);
  if (!within) return within.error();
  if (within->empty()) return false;
  const bool present = r.state != ReplicaState::missing;
  r.state = ReplicaState::deleted;
  r.detail = why;
  r.updated_ms = clock_.now_ms();
  if (auto s = store_.update_replica(r); !s) return s.error();
  if (!present) return false;
  OutboxRow row;
  row.cluster = r.cluster;
  row.kind = ActionKind::remove;
  row.token =
      "remove-" + std::to_string(r.id) + "-" + base36(static_cast<std::uint64_t>(clock_.now_ms()));
  row.payload = {{"replica_id", r.id}, {"path", r.path}, {"within", *within}};
  row.created_ms = clock_.now_ms();
  if (auto s = store_.enqueue(row); !s) return s.error();
  return true;
}

Result<void> DataKeeper::sweep_replication() {
  const Millis now = clock_.now_ms();
  if (now - last_sweep_ms_ < kSweepEveryMs) return Ok{};
  last_sweep_ms_ = now;
  // Only jobs with a checkpoint have anything to replicate: a queue of jobs that never ran
  // costs an index probe each, not a read of its spec.
  auto jobs = store_.unfinished_jobs_with_checkpoints();
  if (!jobs) return jobs.error();
  for (JobId id : *jobs) {
    if (auto r = replicate_job(id); !r) return r;
  }
  return Ok{};
}

Result<BrainReply> DataKeeper::on(const RemoveCompleted& e) {
  if (auto r = store_.mark_action_done(e.outbox_id, clock_.now_ms()); !r) return r.error();
  auto replica = store_.replica(e.payload.value("replica_id", std::int64_t{0}));
  if (!replica) return replica.error();
  if (!*replica) return BrainReply{};
  ReplicaRow& r = **replica;
  r.detail = e.result ? r.detail + "; deleted"
                      : r.detail + "; could not delete: " + e.result.error().message;
  r.updated_ms = clock_.now_ms();
  if (auto s = store_.update_replica(r); !s) return s.error();
  return BrainReply{};
}

// ---- transfers --------------------------------------------------------------------------------

Result<BrainReply> DataKeeper::on(const TransferProgressed& e) {
  auto t = store_.transfer(e.transfer_id);
  if (!t) return t.error();
  if (!*t || !transfer_active((*t)->state) || (*t)->state == TransferState::verifying) {
    return BrainReply{};
  }
  const Millis now = clock_.now_ms();
  TransferRow& tr = **t;
  if (tr.state == TransferState::queued) {
    tr.state = TransferState::running;
    tr.tries += 1;
    if (!tr.started_ms) tr.started_ms = now;
    tr.next_try_ms.reset();
  }
  tr.bytes_done = static_cast<std::int64_t>(e.progress.bytes_done);
  if (e.progress.bytes_total > 0)
    tr.bytes_total = static_cast<std::int64_t>(e.progress.bytes_total);
  tr.rate_bps = e.progress.rate_bytes_per_s;
  if (!e.progress.route.empty()) tr.route = e.progress.route;
  tr.updated_ms = now;
  if (auto r = store_.update_transfer(tr); !r) return r.error();
  return BrainReply{};
}

// Is a failed copy's source still there? It may have failed because it is gone; the listing
// (sizes only) settles it, and a missing source cancels the copies from it.
Result<void> DataKeeper::audit_transfer_source(const TransferRow& tr) {
  auto copies = tr.checkpoint_id ? store_.replicas_of_checkpoint(*tr.checkpoint_id)
                                 : store_.replicas_of_dataset(tr.dataset);
  if (!copies) return copies.error();
  for (const auto& c : *copies) {
    if (c.cluster == tr.src_cluster && on_shared_storage(c) && c.state == ReplicaState::verified &&
        auditing_.insert(c.id).second) {
      if (auto r = request_manifest(c, ManifestPurpose::audit, std::nullopt, {},
                                    ManifestRequest::Hash::none);
          !r)
        return r;
    }
  }
  return Ok{};
}

Result<BrainReply> DataKeeper::on(const TransferFinished& e) {
  auto t = store_.transfer(e.transfer_id);
  if (!t) return t.error();
  if (!*t || !transfer_active((*t)->state)) return BrainReply{};
  const Millis now = clock_.now_ms();
  TransferRow& tr = **t;
  auto replica = store_.replica(tr.replica_id);
  if (!replica) return replica.error();
  if (tr.state == TransferState::queued) tr.tries += 1;  // finished before its first report
  tr.updated_ms = now;
  std::optional<JobId> job;
  if (*replica) {
    auto j = job_of(**replica);
    if (!j) return j.error();
    job = *j;
  }
  if (e.result) {
    tr.state = TransferState::verifying;
    tr.copy_seconds = e.result->seconds;
    tr.copied_bytes =
        tr.bytes_total > 0 ? tr.bytes_total : static_cast<std::int64_t>(e.result->bytes);
    if (!e.result->route.empty()) tr.route = e.result->route;
    if (auto r = store_.update_transfer(tr); !r) return r.error();
    if (*replica) {
      if (auto r = request_manifest(**replica, ManifestPurpose::verify, tr.id); !r)
        return r.error();
    }
    return BrainReply{};
  }
  const Error& err = e.result.error();
  tr.error = err.message;
  if (err.kind == ErrorKind::conflict) {
    // Stopped (the server is stopping): not a failure; it resumes at the next start.
    tr.state = TransferState::queued;
    tr.tries = std::max(0, tr.tries - 1);
    if (auto r = store_.update_transfer(tr); !r) return r.error();
    return BrainReply{};
  }
  if (err.kind != ErrorKind::unreachable) {
    if (auto r = audit_transfer_source(tr); !r) return r.error();
  }
  const bool give_up = tr.tries >= kTransferMaxTries || err.kind == ErrorKind::unsupported ||
                       err.kind == ErrorKind::invalid;
  if (give_up) {
    tr.state = TransferState::failed;
    tr.ended_ms = now;
    if (*replica) {
      ReplicaRow& r = **replica;
      r.state = ReplicaState::missing;
      r.detail = "the copy from " + tr.src_cluster + " failed: " + err.message;
      r.updated_ms = now;
      if (auto s = store_.update_replica(r); !s) return s.error();
    }
  } else {
    tr.state = TransferState::queued;
    tr.next_try_ms = now + transfer_retry_delay_ms(tr.tries);
  }
  if (auto r = store_.update_transfer(tr); !r) return r.error();
  const std::string msg =
      "transfer " + std::to_string(tr.id) + " from " + tr.src_cluster + " to " + tr.dst_cluster +
      " failed (try " + std::to_string(tr.tries) + "): " + err.message +
      (give_up ? "; giving up"
               : "; retrying in " + std::to_string((*tr.next_try_ms - now) / 1000) + " s");
  if (job) {
    if (auto r = event(*job, std::nullopt, give_up ? "transfer-failed" : "transfer-retry", msg);
        !r) {
      return r.error();
    }
  } else if (auto r = store_.add_event(std::nullopt, std::nullopt, now,
                                       give_up ? "transfer-failed" : "transfer-retry", msg);
             !r) {
    return r.error();
  }
  return BrainReply{};
}

Result<void> DataKeeper::cancel_transfers_from(const ReplicaRow& source, const std::string& why) {
  auto active = store_.transfers(true, 10000);
  if (!active) return active.error();
  const Millis now = clock_.now_ms();
  for (auto& t : *active) {
    if (t.src_cluster != source.cluster || t.checkpoint_id != source.checkpoint_id ||
        t.dataset != source.dataset) {
      continue;
    }
    t.state = TransferState::cancelled;
    t.error = "cancelled: " + why;
    t.ended_ms = now;
    t.updated_ms = now;
    if (auto r = store_.update_transfer(t); !r) return r;
    auto dst = store_.replica(t.replica_id);
    if (!dst) return dst.error();
    if (*dst && (*dst)->state == ReplicaState::copying) {
      (*dst)->state = ReplicaState::missing;
      (*dst)->detail = "its copy was cancelled: " + why;
      (*dst)->updated_ms = now;
      if (auto r = store_.update_replica(**dst); !r) return r;
    }
  }
  return Ok{};
}

// ---- throttling -------------------------------------------------------------------------------

Result<void> DataKeeper::throttle_transfers() {
  auto active = store_.transfers(true, 1000);
  if (!active) return active.error();
  const Millis now = clock_.now_ms();
  for (auto& t : *active) {
    if (t.state != TransferState::running) continue;
    std::vector<JobMfuReading> readings;
    for (const std::string& site : {t.src_cluster, t.dst_cluster}) {
      auto live = store_.live_attempts(site);
      if (!live) return live.error();
      for (const auto& a : *live) {
        if (a.state != AttemptState::running) continue;
        std::vector<std::string> suspects;
        MfuWatchState w = mfu_watch_from_json(a.mfu_watch, suspects);
        auto recent = recent_mfu(w);
        if (!w.baseline || !recent) continue;
        readings.push_back({a.job_id, site, *w.baseline, *recent});
      }
    }
    // Each site judges its own jobs by its own settings; the deepest cut wins. Without a cut,
    // the destination's settings pace the raise.
    ThrottleState state{t.cap_bps, t.base_cap_bps, t.rate_bps, t.cap_changed_ms};
    auto settings = [&](const std::string& site) {
      const ClusterSpec* spec = cluster_spec(site);
      return spec != nullptr ? spec->data.throttle : ThrottleSpec{};
    };
    ThrottleDecision d;
    for (const std::string& site : {t.src_cluster, t.dst_cluster}) {
      std::vector<JobMfuReading> here;
      for (const auto& reading : readings) {
        if (reading.cluster == site) here.push_back(reading);
      }
      if (here.empty()) continue;
      ThrottleDecision cut = throttle_step(state, here, settings(site), now);
      if (cut.change == ThrottleChange::cut &&
          (d.change != ThrottleChange::cut || cut.new_cap_bps < d.new_cap_bps)) {
        d = cut;
      }
    }
    if (d.change != ThrottleChange::cut) {
      d = throttle_step(state, readings, settings(t.dst_cluster), now);
      if (d.change == ThrottleChange::cut) d = ThrottleDecision{};  // judged above already
    }
    if (d.change == ThrottleChange::none) continue;
    t.cap_bps = d.new_cap_bps;
    t.cap_changed_ms = now;
    t.updated_ms = now;
    if (auto r = store_.update_transfer(t); !r) return r;
    const std::string kind =
        d.change == ThrottleChange::cut ? "transfer-throttled" : "transfer-unthrottled";
    const std::string msg = "transfer " + std::to_string(t.id) + " (" + t.src_cluster + " -> " +
                            t.dst_cluster + "): " + d.why;
    std::set<JobId> told;
    for (const auto& reading : readings) {
      if (d.change == ThrottleChange::cut && reading.job_id != d.job_id) continue;
      if (!told.insert(reading.job_id).second) continue;
      if (auto r = event(reading.job_id, std::nullopt, kind, msg); !r) return r;
    }
    if (told.empty()) {
      if (auto r = store_.add_event(std::nullopt, std::nullopt, now, kind, msg); !r) return r;
    }
  }
  return Ok{};
}

}  // namespace orch
