// The standard filters and the usable-capacity helpers (filters.h, plugin.h).
#include "scheduler/placement/filters.h"

#include <algorithm>

namespace orch {
namespace {

// "unusable nodes: a b c d e +2"; empty for no nodes.
std::string node_list(const char* what, const std::vector<std::string>& nodes) {
  if (nodes.empty()) return {};
  std::string out = std::string(what) + (nodes.size() > 1 ? "s" : "") + ":";
  for (std::size_t i = 0; i < nodes.size() && i < 5; ++i) out += " " + nodes[i];
  if (nodes.size() > 5) out += " +" + std::to_string(nodes.size() - 5);
  return out;
}

}  // namespace

std::vector<std::string> unusable_nodes(const PlacementRequest& req, const ClusterView& cluster) {
  std::vector<std::string> out = cluster.unhealthy_nodes;
  for (const auto& n : cluster.quarantined_nodes) out.push_back(n);
  if (req.previous_cluster && *req.previous_cluster == cluster.spec->name) {
    for (const auto& n : req.avoid_nodes) {
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// The cluster's ready spares this request may take (usable nodes only).
std::vector<std::string> takeable_spares(const PlacementRequest& req, const ClusterView& cluster,
                                         const std::vector<std::string>& unusable) {
  std::vector<std::string> out;
  if (!req.may_take_spares || req.previous_cluster != cluster.spec->name) return out;
  for (const auto& n : cluster.ready_spares) {
    if (!std::binary_search(unusable.begin(), unusable.end(), n)) out.push_back(n);
  }
  return out;
}

int gpus_free_without_spares(const ClusterView& cluster, const std::vector<std::string>& unusable) {
  const ClusterSpec& c = *cluster.spec;
  const int out = std::min(static_cast<int>(unusable.size()), c.nodes);
  return (c.nodes - out) * c.gpus_per_node - cluster.gpus_used - cluster.gpus_foreign;
}

}  // namespace

int gpus_free(const PlacementRequest& req, const ClusterView& cluster) {
  const auto unusable = unusable_nodes(req, cluster);
  const int spares = static_cast<int>(takeable_spares(req, cluster, unusable).size());
  return gpus_free_without_spares(cluster, unusable) + spares * cluster.spec->gpus_per_node;
}

std::vector<std::string> spares_to_take(const PlacementRequest& req, const ClusterView& cluster) {
  const auto unusable = unusable_nodes(req, cluster);
  const ClusterSpec& c = *cluster.spec;
  // A gang needs distinct nodes, not only GPUs: the nodes neither out of use, nor spares, nor
  // (as far as whole nodes go) busy with other work.
  int spare_nodes = 0;
  for (const auto& n : cluster.spare_nodes) {
    if (!std::binary_search(unusable.begin(), unusable.end(), n)) ++spare_nodes;
  }
  const int busy_gpus = std::max(
      0, cluster.gpus_used - static_cast<int>(cluster.spare_nodes.size()) * c.gpus_per_node +
             cluster.gpus_foreign);
  const int busy_nodes = (busy_gpus + c.gpus_per_node - 1) / std::max(1, c.gpus_per_node);
  int free_nodes = c.nodes - static_cast<int>(unusable.size()) - spare_nodes - busy_nodes;
  int free_gpus = gpus_free_without_spares(cluster, unusable);
  std::vector<std::string> take;
  for (const auto& n : takeable_spares(req, cluster, unusable)) {
    if (free_gpus >= req.job->total_gpus() && free_nodes >= req.job->nodes) break;
    take.push_back(n);
    free_gpus += c.gpus_per_node;
    ++free_nodes;
  }
  return take;
}

std::optional<std::string> AllowedClustersFilter::reject(const PlacementRequest& req,
                                                         const ClusterView& cluster) const {
  const auto& allowed = req.job->allowed_clusters;
  if (allowed.empty()) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), cluster.spec->name) != allowed.end()) {
    return std::nullopt;
  }
  return "not in the job's allowed clusters";
}

std::optional<std::string> PreflightFilter::reject(const PlacementRequest&,
                                                   const ClusterView& cluster) const {
  if (cluster.misconfigured.empty()) return std::nullopt;
  return cluster.misconfigured;
}

std::optional<std::string> SiteHealthyFilter::reject(const PlacementRequest&,
                                                     const ClusterView& cluster) const {
  if (cluster.health == SiteHealth::healthy) return std::nullopt;
  return "site is " + std::string(to_string(cluster.health));
}

std::optional<std::string> AdmissionFilter::reject(const PlacementRequest&,
                                                   const ClusterView& cluster) const {
  switch (cluster.admission) {
    case Admission::active:
      return std::nullopt;
    case Admission::burn_in:
      return "cluster is in burn-in";
    case Admission::pending_delivery:
      return "cluster is not delivered yet";
    case Admission::pending:
      return "cluster is pending burn-in";
    case Admission::draining:
      return "cluster is draining: it takes no new work";
    case Admission::retired:
      return "cluster is retired";
  }
  return "cluster is not admitted";
}

std::optional<std::string> CapacityFilter::reject(const PlacementRequest& req,
                                                  const ClusterView& cluster) const {
  const JobSpec& job = *req.job;
  const ClusterSpec& c = *cluster.spec;
  if (job.gpus_per_node > c.gpus_per_node) {
    return "job needs " + std::to_string(job.gpus_per_node) +
           " GPUs per node, cluster nodes have " + std::to_string(c.gpus_per_node);
  }
  if (job.nodes > c.nodes) {
    return "job needs " + std::to_string(job.nodes) + " nodes, cluster has " +
           std::to_string(c.nodes);
  }
  // Whole nodes: a node is free when none of its GPUs are used. Local sites pack attempts onto
  // nodes in order, so free GPUs / GPUs per node is the number of nodes an attempt can get.
  // Unhealthy nodes, and those the job's last attempt failed on, count as taken.
  int free_gpus = gpus_free(req, cluster);
  if (free_gpus < job.total_gpus()) {
    std::string msg = "only " + std::to_string(std::max(free_gpus, 0)) + " of " +
                      std::to_string(c.total_gpus()) + " GPUs free, job needs " +
                      std::to_string(job.total_gpus());
    // Quarantined nodes are named apart: they are out because of orchestrate's own ledger
    // (`orchestrate node release` brings one back), the others because of the site or the job.
    std::vector<std::string> other, quarantined;
    for (auto& n : unusable_nodes(req, cluster)) {
      const auto& q = cluster.quarantined_nodes;
      (std::find(q.begin(), q.end(), n) != q.end() ? quarantined : other).push_back(std::move(n));
    }
    std::string notes;
    auto note = [&notes](const std::string& more) {
      if (!more.empty()) notes += (notes.empty() ? "" : "; ") + more;
    };
    if (cluster.gpus_foreign > 0) {
      note(std::to_string(cluster.gpus_foreign) + " GPU(s) held by other tenants' jobs");
    }
    note(node_list("unusable node", other));
    note(node_list("quarantined node", quarantined));
    if (!notes.empty()) msg += " (" + notes + ")";
    return msg;
  }
  return std::nullopt;
}

std::optional<std::string> QuotaFilter::reject(const PlacementRequest& req,
                                               const ClusterView& cluster) const {
  if (!req.within_quota) return std::nullopt;
  auto room = req.quota_room.find(cluster.spec->name);
  if (room == req.quota_room.end()) return std::nullopt;
  const int need = req.job->total_gpus();
  if (need <= room->second) return std::nullopt;
  const std::string team = req.job->team.empty() ? std::string("no team") : "team " + req.job->team;
  return "the job's " + team + " has " + std::to_string(std::max(room->second, 0)) +
         " GPU(s) of quota left here, the job needs " + std::to_string(need);
}

}  // namespace orch
