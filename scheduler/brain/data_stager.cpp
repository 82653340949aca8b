// The brain's staging (issue 5): which checkpoints a launch may resume from at a site, what a
// job still needs copied there before it starts (its datasets, a newer checkpoint held at another
// site), and the staging-time terms placement weighs (data_stager.h). Copies are started through
// the transfers' start_transfer (data_transfers.h).
#include <algorithm>
#include <set>

#include "scheduler/brain/data_stager.h"
#include "scheduler/data/replication_plan.h"
#include "scheduler/data/staging.h"
#include "scheduler/lifecycle/job_stats.h"

namespace orch {
// ---- resume and staging -----------------------------------------------------------------------

Result<std::vector<ResumeCandidate>> DataStager::resume_candidates_at(JobId job,
                                                                      const std::string& cluster) {
  // Only a checkpoint with a copy that still exists can be resumed from: those, however many
  // the job saved before them.
  auto ckpts = store_.checkpoints_with_copies(job);
  if (!ckpts) return ckpts.error();
  if (ckpts->empty()) return std::vector<ResumeCandidate>{};  // none held: from the start
  auto copies = store_.replicas_of_checkpoints_with_copies(job);
  if (!copies) return copies.error();
  std::vector<CheckpointCopy> in;
  for (const auto& c : *ckpts) {
    Manifest m;
    if (c.manifest) {
      auto parsed = manifest_from_json(*c.manifest);
      if (parsed) m = std::move(*parsed);
    }
    for (const auto& r : *copies) {
      if (r.checkpoint_id != c.id) continue;
      auto within = registry_.confinement_of(r);
      if (!within) return within.error();
      if (r.cluster != cluster) {
        // Saved where storage cannot be listed (no provider now): never verified, so offered by its
        // path everywhere; the pre-launch check at the site accepts it only if it is there
        // (shared storage), and a site that cannot list either takes it as before.
        if (!c.manifest && r.state == ReplicaState::present && on_shared_storage(r) &&
            !lists_storage_at(cluster_spec(r.cluster))) {
          in.push_back({c.id, c.step, cluster, r.path, true, Manifest{}, *within});
        }
        continue;
      }
      // A copy not listed yet (its manifest action is still queued) is a candidate too: the
      // pre-launch check lists it and accepts it when it is there (and matches the checkpoint's
      // manifest when one is known: a tiered save's drained copy, reported just before the
      // failure that resumes it); never a bad or copying one. A copy on a node's own disk only
      // once listed whole.
      const bool usable =
          r.state == ReplicaState::verified || (r.state == ReplicaState::present && r.node.empty());
      in.push_back({c.id, c.step, r.cluster, r.path, usable, m, *within, r.node});
    }
  }
  return resume_candidates(in, cluster);
}

namespace {

// The copies of one checkpoint that matter to staging it at `cluster` (shared storage only): a
// verified one at another usable site to copy from, and the one at `cluster` in any state.
struct StagingCopies {
  const ReplicaRow* source = nullptr;
  const ReplicaRow* at_dst = nullptr;
};

StagingCopies staging_copies(const CheckpointRow& ckpt, const std::vector<ReplicaRow>& copies,
                             const std::string& cluster, const std::set<std::string>& usable) {
  StagingCopies out;
  for (const auto& r : copies) {
    if (r.checkpoint_id != ckpt.id || !on_shared_storage(r)) continue;
    if (r.cluster == cluster) out.at_dst = &r;
    if (r.state == ReplicaState::verified && r.cluster != cluster && usable.count(r.cluster) != 0) {
      out.source = &r;
    }
  }
  return out;
}

}  // namespace

Result<DataStager::CheckpointStaging> DataStager::stage_checkpoint(
    const JobRow& job, const std::string& cluster, const std::vector<ResumeCandidate>& here,
    const std::vector<AttemptRow>& attempts) {
  CheckpointStaging out;
  const std::int64_t best_here = here.empty() ? -1 : here.front().step;
  // Only checkpoints with a copy that still exists can be staged from or waited for.
  auto ckpts = store_.checkpoints_with_copies(job.id);
  if (!ckpts) return ckpts.error();
  // A job that never saved has nothing to weigh: most placements, and no need to read every
  // cluster's row (usable_sites) for them.
  if (ckpts->empty()) {
    auto saved = store_.has_checkpoints(job.id);
    if (!saved) return saved.error();
    out.saved_before = *saved;
    return out;
  }
  out.saved_before = true;
  auto copies = store_.replicas_of_checkpoints_with_copies(job.id);
  if (!copies) return copies.error();
  auto usable = transfers_.usable_sites();
  if (!usable) return usable.error();
  if (usable->count(cluster) == 0) return out;
  const std::optional<double> step_s = measured_step_s(attempts);
  std::optional<std::vector<TransferRow>> active;  // read only when a copy is under way
  for (auto it = ckpts->rbegin(); it != ckpts->rend(); ++it) {
    const bool newer = it->step > best_here;
    const StagingCopies found = staging_copies(*it, *copies, cluster, *usable);
    // A copy here under way (staging, or a lost copy being replaced) is worth waiting for only
    // while its source answers; else an older copy will do.
    auto in_flight = copy_in_flight(found.at_dst, *usable, active);
    if (!in_flight) return in_flight.error();
    if (found.source == nullptr && *in_flight == nullptr) continue;
    // The newest checkpoint held elsewhere: what resuming from anything older here loses.
    const std::string from =
        *in_flight != nullptr ? (*in_flight)->src_cluster : found.source->cluster;
    auto bw = transfers_.bandwidth_between(from, cluster);
    if (!bw) return bw.error();
    const ResumeWeighing w = weigh_resume(best_here, it->step, step_s, it->bytes.value_or(0), *bw);
    const std::string estimates = describe_weighing(w);
    if (w.floor_step > 0) {
      out.floor_step = w.floor_step;
      out.floor_reason = "step " + std::to_string(it->step) + " is held at " + from +
                         ": resuming below step " + std::to_string(w.floor_step) +
                         " redoes more than copying it takes";
    }
    if (!newer) return out;
    if (!w.stage) {
      std::string msg = "resuming at " + cluster + " without step " + std::to_string(it->step);
      msg += " from ";
      msg += from;
      msg += ": ";
      msg += estimates;
      if (auto r = event(job.id, std::nullopt, "resume-weighed", msg); !r) return r.error();
      return out;
    }
    auto waiting =
        wait_for_checkpoint_copy(job, cluster, *it, found.source, *in_flight, from, estimates);
    if (!waiting) return waiting.error();
    out.wait = std::move(*waiting);
    return out;
  }
  return out;
}

Result<const TransferRow*> DataStager::copy_in_flight(
    const ReplicaRow* at_dst, const std::set<std::string>& usable,
    std::optional<std::vector<TransferRow>>& active) {
  const TransferRow* in_flight = nullptr;
  if (at_dst == nullptr || at_dst->state != ReplicaState::copying) return in_flight;
  if (!active) {
    auto read = store_.transfers(true, 10000);
    if (!read) return read.error();
    active = std::move(*read);
  }
  for (const auto& t : *active) {
    if (t.replica_id == at_dst->id && usable.count(t.src_cluster) != 0) in_flight = &t;
  }
  return in_flight;
}

Result<std::string> DataStager::wait_for_checkpoint_copy(
    const JobRow& job, const std::string& cluster, const CheckpointRow& ckpt,
    const ReplicaRow* source, const TransferRow* in_flight, const std::string& from,
    const std::string& estimates) {
  std::int64_t transfer = 0;
  if (in_flight != nullptr) {
    transfer = in_flight->id;
  } else {
    const ClusterSpec* spec = cluster_spec(cluster);
    auto id = transfers_.start_transfer(
        *source, cluster, replica_path(spec->checkpoints_dir(), job.id, ckpt.step, ckpt.path),
        "staging for job " + std::to_string(job.id), ckpt.bytes.value_or(0),
        TransferPurpose::staging, job.id);
    if (!id) return id.error();
    transfer = *id;
  }
  std::string waiting = "the checkpoint at step " + std::to_string(ckpt.step);
  waiting += " is being copied from ";
  waiting += from;
  waiting += " to ";
  waiting += cluster;
  waiting += " (transfer " + std::to_string(transfer) + ")";
  // Said once per copy: the job waits in staging, placed again each round until it lands.
  if (job.state != JobState::staging || job.reason.find(waiting) == std::string::npos) {
    std::string msg = "waiting for step " + std::to_string(ckpt.step) + " from ";
    msg += from;
    msg += " at ";
    msg += cluster;
    msg += ": ";
    msg += estimates;
    if (auto r = event(job.id, std::nullopt, "resume-weighed", msg); !r) return r.error();
  }
  return waiting;
}

Result<std::map<std::string, double>> DataStager::staging_estimates(const JobSpec& spec) {
  std::map<std::string, double> out;
  if (spec.datasets.empty()) return out;
  for (const auto& c : clusters_) {
    double total = 0;
    for (const auto& name : spec.datasets) {
      auto d = store_.dataset(name);
      if (!d) return d.error();
      if (!*d) continue;
      auto copies = store_.replicas_of_dataset(name);
      if (!copies) return copies.error();
      bool here = false;
      double best = 0;
      for (const auto& r : *copies) {
        // A copy under way counts as there: the job that started it is waiting for it.
        if (r.cluster == c.name && r.state == ReplicaState::copying) here = true;
        if (r.state != ReplicaState::verified) continue;
        if (r.cluster == c.name) here = true;
        auto bw = transfers_.bandwidth_between(r.cluster, c.name);
        if (!bw) return bw.error();
        best = std::max(best, *bw);
      }
      if (!here && best > 0) total += staging_seconds((*d)->bytes, best);
    }
    out[c.name] = total;
  }
  return out;
}

Result<std::map<std::string, double>> DataStager::checkpoint_copy_estimates(JobId job) {
  std::map<std::string, double> out;
  auto latest = store_.latest_checkpoint(job);
  if (!latest) return latest.error();
  if (!*latest || !(*latest)->bytes) return out;
  const CheckpointRow& ckpt = **latest;
  auto copies = store_.replicas_of_checkpoint(ckpt.id);
  if (!copies) return copies.error();
  // Held: a copy there, registered, verified or under way. Sources: copies registered or
  // verified (a registered one is verified by its listing before it is copied).
  std::set<std::string> held, sources;
  for (const auto& r : *copies) {
    if (!on_shared_storage(r)) continue;  // a node's own copy is no source and no place to move
    const bool kept = r.state == ReplicaState::present || r.state == ReplicaState::verified;
    if (kept || r.state == ReplicaState::copying) held.insert(r.cluster);
    if (kept) sources.insert(r.cluster);
  }
  for (const auto& c : clusters_) {
    if (held.count(c.name)) {
      out[c.name] = 0;
      continue;
    }
    double best = 0;
    for (const auto& from : sources) {
      auto bw = transfers_.bandwidth_between(from, c.name);
      if (!bw) return bw.error();
      best = std::max(best, *bw);
    }
    out[c.name] = staging_seconds(*ckpt.bytes, best);
  }
  return out;
}

Result<std::vector<std::string>> DataStager::stage_for(const JobRow& job,
                                                       const std::string& cluster,
                                                       std::map<std::string, std::string>& env) {
  std::vector<std::string> waits;
  const ClusterSpec* spec = cluster_spec(cluster);
  if (spec == nullptr) return waits;
  for (const auto& name : job.spec.datasets) {
    auto d = store_.dataset(name);
    if (!d) return d.error();
    if (!*d) {
      waits.push_back("dataset " + name + " is not registered (orchestrate data add)");
      continue;
    }
    auto copies = store_.replicas_of_dataset(name);
    if (!copies) return copies.error();
    const ReplicaRow* here = nullptr;
    const ReplicaRow* source = nullptr;
    double best = -1;
    for (const auto& r : *copies) {
      if (r.cluster == cluster) here = &r;
      if (r.state != ReplicaState::verified || r.cluster == cluster) continue;
      auto bw = transfers_.bandwidth_between(r.cluster, cluster);
      if (!bw) return bw.error();
      if (*bw > best) {
        best = *bw;
        source = &r;
      }
    }
    if (here != nullptr && here->state == ReplicaState::verified) {
      env[dataset_env_name(name)] = here->path;
      continue;
    }
    if (here != nullptr &&
        (here->state == ReplicaState::copying || here->state == ReplicaState::present)) {
      std::string why = "dataset " + name;
      why +=
          here->state == ReplicaState::copying ? " is being copied to " : " is being verified at ";
      why += cluster;
      waits.push_back(std::move(why));
      continue;
    }
    if (source == nullptr) {
      waits.push_back("dataset " + name + " has no verified copy to stage from");
      continue;
    }
    if (!lists_storage_at(spec)) {
      std::string why = "dataset ";
      why += name;
      why += " cannot be staged to ";
      why += cluster;
      why += " (provider ";
      why += spec->provider;
      why += ")";
      waits.push_back(std::move(why));
      continue;
    }
    auto id = transfers_.start_transfer(*source, cluster, dataset_path(spec->datasets_dir(), name),
                                        "staging for job " + std::to_string(job.id), (*d)->bytes,
                                        TransferPurpose::staging, job.id);
    if (!id) return id.error();
    std::string why = "dataset " + name + " is being copied from " + source->cluster;
    why += " to " + cluster + " (transfer " + std::to_string(*id) + ")";
    waits.push_back(std::move(why));
  }
  if (auto r = stage_code(job, cluster, waits); !r) return r.error();
  return waits;
}

}  // namespace orch
