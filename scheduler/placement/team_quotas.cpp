// What teams hold against their quotas (team_quotas.h).
#include "scheduler/placement/team_quotas.h"

#include <algorithm>

namespace orch {
namespace {

const TeamQuota kNoQuota{0, {}, true};  // a team the clusters file does not name

}  // namespace

TeamLedger::TeamLedger(const SchedulingSpec& spec, int fleet_gpus, std::vector<TeamUse> live)
    : spec_(&spec), fleet_gpus_(fleet_gpus) {
  std::sort(live.begin(), live.end(),
            [](const TeamUse& a, const TeamUse& b) { return a.attempt < b.attempt; });
  for (const auto& u : live) count(u);
}

const TeamQuota* TeamLedger::quota_of(const std::string& team) const {
  if (!enabled()) return nullptr;
  auto it = spec_->teams.find(team);
  return it == spec_->teams.end() ? &kNoQuota : &it->second;
}

void TeamLedger::count(const TeamUse& u) {
  if (!enabled()) return;
  // Borrowed when it takes the team past a quota: its room before it was counted was short.
  if (!within(u.team, u.cluster, u.gpus)) borrowed_.insert(u.attempt);
  used_[u.team] += u.gpus;
  used_on_[{u.team, u.cluster}] += u.gpus;
}

void TeamLedger::add(const TeamUse& use) {
  count(use);
}

std::optional<int> TeamLedger::room(const std::string& team, const std::string& cluster) const {
  const TeamQuota* q = quota_of(team);
  if (q == nullptr) return std::nullopt;
  std::optional<int> room;
  if (q->gpus) room = *q->gpus - used(team);
  if (auto it = q->cluster_gpus.find(cluster); it != q->cluster_gpus.end()) {
    auto on = used_on_.find({team, cluster});
    const int here = it->second - (on == used_on_.end() ? 0 : on->second);
    room = room ? std::min(*room, here) : here;
  }
  return room;
}

bool TeamLedger::within(const std::string& team, const std::string& cluster, int gpus) const {
  auto r = room(team, cluster);
  return !r || gpus <= *r;
}

bool TeamLedger::may_borrow(const std::string& team) const {
  const TeamQuota* q = quota_of(team);
  return q == nullptr || q->borrow;
}

int TeamLedger::used(const std::string& team) const {
  auto it = used_.find(team);
  return it == used_.end() ? 0 : it->second;
}

double TeamLedger::dominant_share(const std::string& team) const {
  return fleet_gpus_ > 0 ? static_cast<double>(used(team)) / fleet_gpus_ : 0.0;
}

std::string TeamLedger::describe(const std::string& team) const {
  const std::string who = team.empty() ? std::string("jobs of no team") : "team " + team;
  std::string out =
      who + " hold" + (team.empty() ? "" : "s") + " " + std::to_string(used(team)) + " GPU(s)";
  const TeamQuota* q = quota_of(team);
  if (q == nullptr) return out;
  if (q == &kNoQuota) return out + ", no quota (the clusters file's teams do not name it)";
  std::string quota;
  if (q->gpus) quota = std::to_string(*q->gpus) + " fleet-wide";
  for (const auto& [cluster, gpus] : q->cluster_gpus) {
    quota += (quota.empty() ? "" : ", ") + std::to_string(gpus) + " on " + cluster;
  }
  return out + ", quota " + quota;
}

std::string TeamLedger::use_of_quota(const std::string& team, const std::string& cluster) const {
  const TeamQuota* q = quota_of(team);
  if (q == nullptr) return {};
  std::string out;
  if (q->gpus) out = std::to_string(used(team)) + "/" + std::to_string(*q->gpus);
  if (auto it = q->cluster_gpus.find(cluster); it != q->cluster_gpus.end()) {
    auto on = used_on_.find({team, cluster});
    out += (out.empty() ? "" : ", ") + std::to_string(on == used_on_.end() ? 0 : on->second) + "/" +
           std::to_string(it->second) + " on " + cluster;
  }
  return out;
}

}  // namespace orch
