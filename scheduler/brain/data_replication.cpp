// The data part's replication and retention (issue 5): the plan (scheduler/data/replication_plan.h)
// turned into copies between sites and `remove` actions, the sweep that plans every job with a
// checkpoint now and then, and what a site says of a removal. Node copies' retention is
// data_tiers.cpp. Rules: docs/data.md.
#include <iterator>

#include "scheduler/brain/brain_text.h"
#include "scheduler/brain/data_transfers.h"
#include "scheduler/data/replication_plan.h"
#include "scheduler/data/staging.h"

namespace orch {
namespace {

using brain_text::base36;

constexpr Millis kSweepEveryMs = 10'000;

}  // namespace

Result<void> DataTransfers::replicate_job(JobId job_id) {
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

Result<ReplicationInput> DataTransfers::replication_input(const ReplicationSpec& policy,
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
  // pair_bandwidth reads both directions, so each pair is read once and serves both.
  for (auto a = usable->begin(); a != usable->end(); ++a) {
    for (auto b = std::next(a); b != usable->end(); ++b) {
      auto p = pair_bandwidth(*a, *b);
      if (!p) return p.error();
      if (!p->measured) continue;
      in.bandwidth[{*a, *b}] = p->bps;
      in.bandwidth[{*b, *a}] = p->bps;
    }
  }
  return in;
}

Result<void> DataTransfers::start_replica_copies(JobId job_id, const ReplicationPlan& plan,
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
    auto id = start_transfer(*source, copy.to, dst_path, copy.why, c->bytes.value_or(0),
                             TransferPurpose::replication, job_id);
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

Result<void> DataTransfers::delete_replicas(JobId job_id, const ReplicationPlan& plan,
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

Result<bool> DataTransfers::remove_copy(ReplicaRow r, const std::string& why) {
  if (r.state == ReplicaState::deleted || r.state == ReplicaState::refused) return false;
  // The site deletes only inside this directory, after resolving links (issue 37); a copy
  // with none to confine it (its cluster is no longer configured) is left alone.
  auto within = registry_.confinement_of(r);
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

Result<void> DataTransfers::sweep_replication() {
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

Result<BrainReply> DataTransfers::on(const RemoveCompleted& e) {
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

}  // namespace orch
