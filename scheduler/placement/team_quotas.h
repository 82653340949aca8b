#pragma once
// Team quotas (issue 18, docs/scheduling.md), without I/O: what each team holds, how much of its
// quota is left on each cluster, which of its attempts are borrowed, and its dominant share.
//
// A team's use is the GPUs of its live attempts, fleet-wide and per cluster. A launch is within
// quota when the team's use plus the launch stays within its fleet-wide quota and its quota on
// that cluster (where it has them). Beyond that a team may borrow idle GPUs (unless its quota
// says `borrow: false`). Its attempts are counted oldest first: those that take its use past a
// quota are borrowed, and are the first that preemption takes back for a team within its quota.
// Among teams that borrow, the one with the smallest dominant share goes first: GPUs are the one
// resource orchestrate allots, so that share is the team's GPUs over the fleet's.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/model/team_use.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

class TeamLedger {
 public:
  TeamLedger() = default;  // no quotas: everything is within, nothing is borrowed
  // `spec` must outlive the ledger. `fleet_gpus`: every configured GPU, the shares' divisor.
  TeamLedger(const SchedulingSpec& spec, int fleet_gpus, std::vector<TeamUse> live);

  bool enabled() const { return spec_ != nullptr && spec_->quotas(); }
  // A launch made since the ledger was built.
  void add(const TeamUse& use);

  // GPUs the team may still start on the cluster within its quotas; nullopt: no bound there.
  std::optional<int> room(const std::string& team, const std::string& cluster) const;
  bool within(const std::string& team, const std::string& cluster, int gpus) const;
  bool may_borrow(const std::string& team) const;
  bool borrowed(std::int64_t attempt) const { return borrowed_.count(attempt) != 0; }
  int used(const std::string& team) const;
  double dominant_share(const std::string& team) const;
  // "team vision holds 48 GPU(s), quota 64 fleet-wide, 32 on alpha"
  std::string describe(const std::string& team) const;
  // The team's use against the quotas that bound it on the cluster, for a preemption's why:
  // "4/4" (fleet-wide), "2/4 on east", or both ("4/8, 2/4 on east"); "" without a bound.
  std::string use_of_quota(const std::string& team, const std::string& cluster) const;

 private:
  const TeamQuota* quota_of(const std::string& team) const;
  void count(const TeamUse& use);

  const SchedulingSpec* spec_ = nullptr;
  int fleet_gpus_ = 0;
  std::map<std::string, int> used_;                             // by team
  std::map<std::pair<std::string, std::string>, int> used_on_;  // by (team, cluster)
  std::set<std::int64_t> borrowed_;
};

}  // namespace orch
