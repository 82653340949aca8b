// The data part's tiers (issue 38, tiered checkpoints): a job saves a checkpoint fast to its
// node's own disk ($ORCH_LOCAL_CHECKPOINT_DIR), then drains it to the site's shared storage in
// the background; each is a line of the same step, and each becomes a copy of one checkpoint.
// A node's copy is listed like any other (its manifest is the checkpoint's when it comes first),
// never a source for copies elsewhere, resumed from only on its node, lost with its node, and
// deleted by retention with the checkpoint or once newer ones are kept on that node. The tiers'
// rules are here together: where a node's copy lies, attaching a tier and a lost node's copies
// are the registry's (data_registry.h), each node's retention the transfers' (data_transfers.h).
// docs/data.md.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "scheduler/brain/data_registry.h"
#include "scheduler/brain/data_transfers.h"
#include "scheduler/model/checkpoint_dir.h"

namespace orch {

Result<std::string> DataRegistry::tier_dir(const AttemptRow& a, const CheckpointReport& c) {
  if (c.tier == CheckpointTier::shared) return checkpoint_dir_of(a);
  const ClusterSpec* spec = cluster_spec(a.cluster);
  if (spec == nullptr || spec->node_local_root.empty()) {
    return make_error(ErrorKind::invalid, "cluster " + a.cluster +
                                              " keeps no copies on a node's own disk (no "
                                              "storage.node_local); save it to the shared tier");
  }
  if (!a.nodes.empty() && std::find(a.nodes.begin(), a.nodes.end(), c.node) == a.nodes.end()) {
    return make_error(ErrorKind::invalid,
                      "node \"" + c.node.substr(0, 64) + "\" is not one of the attempt's nodes");
  }
  return node_local_job_dir(spec->node_local_root, c.node, a.job_id);
}

Result<bool> DataRegistry::add_tier_copy(const AttemptRow& a, const CheckpointReport& c,
                                         const std::string& path) {
  auto same_step = store_.checkpoints_of_attempt_at(a.job_id, a.id, c.step);
  if (!same_step) return same_step.error();
  for (const CheckpointRow& ckpt : *same_step) {
    if (ckpt.path == path) return true;  // the same line again
    auto copies = store_.replicas_of_checkpoint(ckpt.id);
    if (!copies) return copies.error();
    const bool has_tier = std::any_of(copies->begin(), copies->end(), [&](const ReplicaRow& r) {
      return r.cluster == a.cluster && r.node == c.node;
    });
    if (has_tier) continue;
    if (auto r = register_checkpoint(a, ckpt.id, path, c.node); !r) return r.error();
    return true;
  }
  return false;
}

Result<void> DataRegistry::lose_node_copies(const AttemptRow& a, const std::string& node) {
  auto lost =
      store_.lose_node_copies(a.cluster, node,
                              "lost with node " + node + " (attempt " + std::to_string(a.no) +
                                  " of job " + std::to_string(a.job_id) + " lost it)",
                              clock_.now_ms());
  if (!lost) return lost.error();
  return Ok{};
}

Result<void> DataTransfers::retire_node_copies(JobId job, const std::vector<CheckpointRow>& ckpts,
                                               const std::vector<ReplicaRow>& copies, int keep,
                                               const ReplicationPlan& plan) {
  // Per node, the newest `keep` checkpoints with a live copy there stay; older ones go. Copies
  // the plan's retention just deleted (every copy of the checkpoint at that site) are gone.
  std::set<std::pair<std::int64_t, std::string>> deleted;
  for (const auto& del : plan.deletes) deleted.insert({del.checkpoint_id, del.cluster});
  std::map<std::int64_t, std::int64_t> step_of;
  for (const CheckpointRow& c : ckpts) step_of[c.id] = c.step;
  std::map<std::pair<std::string, std::string>, std::vector<const ReplicaRow*>> by_node;
  for (const ReplicaRow& r : copies) {
    if (on_shared_storage(r) || !r.checkpoint_id || step_of.count(*r.checkpoint_id) == 0) continue;
    if (deleted.count({*r.checkpoint_id, r.cluster}) != 0) continue;
    if (r.state != ReplicaState::present && r.state != ReplicaState::verified) continue;
    by_node[{r.cluster, r.node}].push_back(&r);
  }
  for (auto& [where, held] : by_node) {
    std::sort(held.begin(), held.end(), [&](const ReplicaRow* x, const ReplicaRow* y) {
      return step_of[*x->checkpoint_id] > step_of[*y->checkpoint_id];
    });
    for (std::size_t i = static_cast<std::size_t>(std::max(keep, 1)); i < held.size(); ++i) {
      const std::string why = "retention: each node keeps the newest " +
                              std::to_string(std::max(keep, 1)) + " of the job's checkpoints";
      auto removed = remove_copy(*held[i], why);
      if (!removed) return removed.error();
      if (!*removed) continue;
      if (auto r = event(job, std::nullopt, "checkpoint-deleted",
                         "deleting the checkpoint at step " +
                             std::to_string(step_of[*held[i]->checkpoint_id]) + " at " +
                             where.first + " (node " + where.second + "): " + why);
          !r) {
        return r;
      }
    }
  }
  return Ok{};
}

}  // namespace orch
