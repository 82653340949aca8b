// The data transfers (issue 5): copies between sites as the transfer worker reports them
// (started, progressed, finished, retried, failed, cancelled), MFU-aware throttling
// (scheduler/data/throttle.h), and replicating a dataset or checkpoint by hand. Replication and
// retention are data_replication.cpp. Where a copy must lie and what it should hold are the
// registry's (data_registry.h).
#include <algorithm>
#include <cstdio>

#include "scheduler/brain/data_transfers.h"
#include "scheduler/data/replication_plan.h"
#include "scheduler/data/staging.h"
#include "scheduler/data/throttle.h"

namespace orch {
namespace {

double cap_of(const ClusterSpec* s) {
  return s != nullptr && s->data.bwlimit_mb_s > 0 ? s->data.bwlimit_mb_s * 1e6 : 0.0;
}

// The tighter of two caps, where 0 means none.
double tighter(double a, double b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

}  // namespace

double DataTransfers::bandwidth_of(const std::vector<TransferRow>& done) {
  std::vector<CopySample> samples;
  samples.reserve(done.size());
  for (const auto& t : done) samples.push_back({t.copied_bytes, t.copy_seconds});
  return estimate_bandwidth(samples);
}

Result<std::set<std::string>> DataTransfers::usable_sites() {
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

Result<DataTransfers::PairBandwidth> DataTransfers::pair_bandwidth(const std::string& a,
                                                                   const std::string& b) {
  if (bandwidths_epoch_ != store_.transfers_epoch()) {
    bandwidths_.clear();
    bandwidths_epoch_ = store_.transfers_epoch();
  }
  // done_transfers reads both directions: one entry serves the pair either way.
  auto key = a < b ? std::pair(a, b) : std::pair(b, a);
  if (auto it = bandwidths_.find(key); it != bandwidths_.end()) return it->second;
  auto done = store_.done_transfers(a, b, 10);
  if (!done) return done.error();
  const PairBandwidth p{!done->empty(), bandwidth_of(*done)};
  bandwidths_.emplace(std::move(key), p);
  return p;
}

Result<double> DataTransfers::bandwidth_between(const std::string& a, const std::string& b) {
  auto p = pair_bandwidth(a, b);
  if (!p) return p.error();
  return p->bps;
}

Result<std::int64_t> DataTransfers::start_transfer(const ReplicaRow& source, const std::string& to,
                                                   const std::string& dst_path,
                                                   const std::string& why, std::int64_t bytes,
                                                   TransferPurpose purpose,
                                                   std::optional<JobId> job) {
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
    auto within = registry_.confinement_of(dst);
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
  auto manifest = registry_.registered_manifest(source);
  if (!manifest) return manifest.error();
  t.directory = *manifest && (*manifest)->directory;
  t.state = TransferState::queued;
  t.why = why + (retry_with_checksum ? " (the last copy there was corrupt)" : "");
  t.purpose = purpose;
  t.job_id = job;
  t.bytes_total = bytes;
  t.base_cap_bps = tighter(cap_of(cluster_spec(source.cluster)), cap_of(cluster_spec(to)));
  t.cap_bps = t.base_cap_bps;
  t.created_ms = now;
  auto id = store_.insert_transfer(t);
  if (!id) return id.error();
  return *id;
}

// ---- transfers --------------------------------------------------------------------------------

Result<BrainReply> DataTransfers::on(const TransferProgressed& e) {
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
Result<void> DataTransfers::audit_transfer_source(const TransferRow& tr) {
  auto copies = tr.checkpoint_id ? store_.replicas_of_checkpoint(*tr.checkpoint_id)
                                 : store_.replicas_of_dataset(tr.dataset);
  if (!copies) return copies.error();
  for (const auto& c : *copies) {
    if (c.cluster == tr.src_cluster && on_shared_storage(c) && c.state == ReplicaState::verified &&
        registry_.begin_audit(c.id)) {
      if (auto r = registry_.request_manifest(c, ManifestPurpose::audit, std::nullopt, {},
                                              ManifestRequest::Hash::none);
          !r)
        return r;
    }
  }
  return Ok{};
}

Result<BrainReply> DataTransfers::on(const TransferFinished& e) {
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
    auto j = registry_.job_of(**replica);
    if (!j) return j.error();
    job = *j;
  }
  if (e.result) {
    // A copy without a copy row (a job's code, issue 40: code_staging.h) has nothing to list:
    // it is done.
    tr.state = *replica ? TransferState::verifying : TransferState::done;
    if (!*replica) tr.ended_ms = now;
    tr.copy_seconds = e.result->seconds;
    tr.copied_bytes =
        tr.bytes_total > 0 ? tr.bytes_total : static_cast<std::int64_t>(e.result->bytes);
    // Every byte is there (a copy too quick to report progress counts in the throughput now).
    tr.bytes_done = std::max(tr.bytes_done, tr.copied_bytes);
    if (!e.result->route.empty()) tr.route = e.result->route;
    if (auto r = store_.update_transfer(tr); !r) return r.error();
    if (*replica) {
      if (auto r = registry_.request_manifest(**replica, ManifestPurpose::verify, tr.id); !r)
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

Result<void> DataTransfers::cancel_transfers_from(const ReplicaRow& source,
                                                  const std::string& why) {
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

Result<void> DataTransfers::throttle_transfers() {
  auto active = store_.transfers(true, 1000);
  if (!active) return active.error();
  const Millis now = clock_.now_ms();
  for (auto& t : *active) {
    if (t.state != TransferState::running) continue;
    std::vector<JobMfuReading> readings;
    for (const std::string& site : {t.src_cluster, t.dst_cluster}) {
      auto live = store_.live_attempts(site, false);  // their MFU watch alone is read
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

Result<BrainReply> DataTransfers::on(const ReplicateData& e) {
  const ClusterSpec* to = cluster_spec(e.to);
  if (!to) return make_error(ErrorKind::not_found, "no cluster " + e.to + " is configured");
  if (!lists_storage_at(to)) {
    return make_error(ErrorKind::unsupported, "cluster " + e.to + " (provider " + to->provider +
                                                  ") cannot hold copies yet");
  }
  std::vector<ReplicaRow> copies;
  std::string name;
  std::string dst_path;
  std::int64_t bytes = 0;
  if (!e.dataset.empty()) {
    auto d = store_.dataset(e.dataset);
    if (!d) return d.error();
    if (!*d) return make_error(ErrorKind::not_found, "no dataset " + e.dataset);
    auto rs = store_.replicas_of_dataset(e.dataset);
    if (!rs) return rs.error();
    copies = std::move(*rs);
    name = "dataset " + e.dataset;
    dst_path = dataset_path(to->datasets_dir(), e.dataset);
    bytes = (*d)->bytes;
  } else {
    auto ckpts = store_.checkpoints_of(e.job_id);
    if (!ckpts) return ckpts.error();
    auto job = store_.job(e.job_id);
    if (!job) return job.error();
    if (!*job) return make_error(ErrorKind::not_found, "no job " + std::to_string(e.job_id));
    // The newest checkpoint with a verified copy.
    for (auto it = ckpts->rbegin(); it != ckpts->rend() && copies.empty(); ++it) {
      auto rs = store_.replicas_of_checkpoint(it->id);
      if (!rs) return rs.error();
      bool verified = std::any_of(rs->begin(), rs->end(), [](const ReplicaRow& r) {
        return r.state == ReplicaState::verified;
      });
      if (!verified) continue;
      copies = std::move(*rs);
      name =
          "checkpoint at step " + std::to_string(it->step) + " of job " + std::to_string(e.job_id);
      dst_path = replica_path(to->checkpoints_dir(), e.job_id, it->step, it->path);
      bytes = it->bytes.value_or(0);
    }
    if (copies.empty()) {
      return make_error(ErrorKind::conflict,
                        "job " + std::to_string(e.job_id) + " has no verified checkpoint yet");
    }
  }
  const ReplicaRow* source = nullptr;
  double best = -1;
  for (const auto& c : copies) {
    if (c.cluster == e.to && on_shared_storage(c) &&
        (c.state == ReplicaState::verified || c.state == ReplicaState::copying)) {
      BrainReply reply;
      reply.message = name + " is already " + std::string(to_string(c.state)) + " at " + e.to;
      return reply;
    }
    if (c.state != ReplicaState::verified || !on_shared_storage(c)) continue;
    auto bw = bandwidth_between(c.cluster, e.to);
    if (!bw) return bw.error();
    if (*bw > best) {
      best = *bw;
      source = &c;
    }
  }
  if (!source) {
    return make_error(ErrorKind::conflict, name + " has no verified copy to copy from");
  }
  auto id = start_transfer(*source, e.to, dst_path, "requested by a person", bytes,
                           TransferPurpose::manual,
                           e.job_id > 0 ? std::optional<JobId>(e.job_id) : std::nullopt);
  if (!id) return id.error();
  BrainReply reply;
  reply.transfer_id = *id;
  reply.message = "copying " + name + " from " + source->cluster + " to " + e.to + " (transfer " +
                  std::to_string(*id) + ")";
  return reply;
}

}  // namespace orch
