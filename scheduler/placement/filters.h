#pragma once
// The standard filters. Each is one small class; see filters.cpp for the rules.

#include "scheduler/placement/plugin.h"

namespace orch {

// The job's `placement.allowed` list, when it has one.
class AllowedClustersFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "allowed-clusters"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

// Only sites that answer get work.
class SiteHealthyFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "site-healthy"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

// Only admitted clusters get work: a new cluster that asks for burn-in waits until its nodes
// have passed (scheduler/model/node_state.h, Admission).
class AdmissionFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "admission"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

// Only clusters whose preflight passed (or was not run yet) get work: a cluster the server
// configured wrong (its key file, storage root, partition...) would fail every launch.
class PreflightFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "preflight"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

// Shape (nodes, GPUs per node) and free GPUs right now. Unhealthy, quarantined and avoided
// nodes are not capacity.
class CapacityFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "capacity"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

// With the request's within_quota: only clusters where the job's team has the room left in its
// quota (team_quotas.h).
class QuotaFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "quota"; }
  std::optional<std::string> reject(const PlacementRequest& req,
                                    const ClusterView& cluster) const override;
};

}  // namespace orch
