// Checkpoint replication and retention (replication_plan.h).
#include "scheduler/data/replication_plan.h"

#include <algorithm>
#include <optional>

#include "scheduler/model/checkpoint_dir.h"

namespace orch {
namespace {

bool has_verified(const CheckpointView& c) {
  return std::any_of(c.replicas.begin(), c.replicas.end(),
                     [](const ReplicaView& r) { return r.state == ReplicaState::verified; });
}

const ReplicaView* replica_at(const CheckpointView& c, const std::string& cluster) {
  for (const ReplicaView& r : c.replicas) {
    if (r.cluster == cluster) return &r;
  }
  return nullptr;
}

// A copy the site refused (it resolves outside its directory) is never written to again: a copy
// there would go through the link that leads out.
bool refused_at(const CheckpointView& c, const std::string& cluster) {
  const ReplicaView* r = replica_at(c, cluster);
  return r != nullptr && r->state == ReplicaState::refused;
}

bool verified_at(const CheckpointView& c, const std::string& cluster) {
  for (const ReplicaView& r : c.replicas) {
    if (r.cluster == cluster && r.state == ReplicaState::verified) return true;
  }
  return false;
}

// Measured bytes/s from -> to; -1 when unknown (sorts after every measured route).
double route_bps(const ReplicationInput& in, const std::string& from, const std::string& to) {
  auto it = in.bandwidth.find({from, to});
  return it == in.bandwidth.end() ? -1.0 : it->second;
}

// The verified copy at a usable site to copy from: the fastest measured route to `to`, then the
// first by name.
struct Source {
  std::string cluster;
  double bps = -1;
};
std::optional<Source> best_source(const ReplicationInput& in, const std::vector<std::string>& from,
                                  const std::string& to) {
  std::optional<Source> best;
  for (const std::string& s : from) {  // sorted by name
    const double bps = route_bps(in, s, to);
    if (!best || bps > best->bps) best = Source{s, bps};
  }
  return best;
}

std::string copy_why(const CheckpointView& c, const std::string& to, const ReplicationSpec& p) {
  if (const ReplicaView* r = replica_at(c, to)) {
    if (r->state == ReplicaState::missing) return "re-replicate the copy lost at " + to;
    if (r->state == ReplicaState::corrupt) return "re-replicate the corrupt copy at " + to;
    if (r->state == ReplicaState::deleted) return "re-replicate the copy deleted at " + to;
  }
  if (to == c.saved_at) return "re-replicate the copy lost at " + to;
  if (!p.to.empty() && to == p.to) return "off-site copy (replicate.to)";
  return "off-site copy";
}

void plan_copies(const ReplicationInput& in, const CheckpointView& newest, ReplicationPlan& plan) {
  const ReplicationSpec& p = in.policy;
  // Sites that hold it (verified, usable) or will (a transfer in flight): each counts once.
  std::vector<std::string> sources;
  int holding = 0;
  for (const std::string& site : in.usable_sites) {
    const bool verified = verified_at(newest, site);
    if (verified) sources.push_back(site);
    if (verified || in.in_flight.count({newest.id, site})) ++holding;
  }
  if (sources.empty()) return;  // its verified copies are all at sites we cannot use now
  int wanted = p.copies - holding;
  if (wanted <= 0) return;

  // Destinations in order of preference: `to`, the origin, then the fastest routes, by name.
  std::vector<std::string> order;
  auto lacks = [&](const std::string& site) {
    return in.usable_sites.count(site) && !verified_at(newest, site) && !refused_at(newest, site) &&
           !in.in_flight.count({newest.id, site}) &&
           std::find(order.begin(), order.end(), site) == order.end();
  };
  if (!p.to.empty() && lacks(p.to)) order.push_back(p.to);
  if (!newest.saved_at.empty() && lacks(newest.saved_at)) order.push_back(newest.saved_at);
  std::vector<std::pair<double, std::string>> others;
  for (const std::string& site : in.usable_sites) {
    if (!lacks(site)) continue;
    others.emplace_back(best_source(in, sources, site)->bps, site);
  }
  std::stable_sort(others.begin(), others.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });  // by name
  for (auto& [bps, site] : others) order.push_back(site);

  for (const std::string& to : order) {
    if (wanted <= 0) break;
    plan.copies.push_back(
        PlannedCopy{newest.id, best_source(in, sources, to)->cluster, to, copy_why(newest, to, p)});
    --wanted;
  }
}

void plan_deletes(const ReplicationInput& in, const std::vector<const CheckpointView*>& usable,
                  ReplicationPlan& plan) {
  const ReplicationSpec& p = in.policy;
  const std::size_t keep = static_cast<std::size_t>(std::max(p.keep, 1));
  if (usable.size() <= keep) return;
  // The newest checkpoint held where the policy wants it (or everywhere it can be): what a lost
  // site falls back to. It is kept whatever its age, and nothing goes before there is one. It
  // need not be the newest: a job that saves faster than its copies travel would otherwise
  // never let retention run, and fill its sites.
  const int needed = std::min<int>(p.copies, static_cast<int>(in.usable_sites.size()));
  const CheckpointView* safe = nullptr;
  for (const CheckpointView* c : usable) {
    int held = 0;
    for (const std::string& site : in.usable_sites) held += verified_at(*c, site);
    if (held >= needed) {
      safe = c;
      break;
    }
  }
  if (safe == nullptr) return;
  const auto copying = [&](const CheckpointView& c) {
    return std::any_of(in.in_flight.begin(), in.in_flight.end(),
                       [&](const auto& f) { return f.first == c.id; });
  };
  const std::string why = "retention: older than the newest " + std::to_string(keep) +
                          " verified checkpoint" + (keep == 1 ? "" : "s");
  for (std::size_t i = usable.size(); i-- > keep;) {  // oldest first
    const CheckpointView& c = *usable[i];
    if (&c == safe || copying(c)) continue;  // a copy in flight reads from it
    std::vector<std::string> sites;
    for (const ReplicaView& r : c.replicas) {
      if (r.state == ReplicaState::deleted || r.state == ReplicaState::missing ||
          r.state == ReplicaState::refused) {
        continue;  // gone, or never to be touched (refused)
      }
      if (!in.usable_sites.count(r.cluster)) continue;
      sites.push_back(r.cluster);
    }
    std::sort(sites.begin(), sites.end());
    sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
    for (const std::string& site : sites) plan.deletes.push_back(PlannedDelete{c.id, site, why});
  }
}

std::string strip_trailing_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string join_path(const std::string& dir, const std::string& rest) {
  const std::string d = strip_trailing_slashes(dir);
  if (d.empty()) return rest;
  if (d == "/") return "/" + rest;
  return d + "/" + rest;
}

}  // namespace

ReplicationPlan plan_replication(const ReplicationInput& in) {
  ReplicationPlan plan;
  if (!in.policy.enabled) return plan;
  std::vector<const CheckpointView*> usable;
  for (const CheckpointView& c : in.checkpoints) {
    if (has_verified(c)) usable.push_back(&c);
  }
  if (usable.empty()) return plan;
  std::sort(usable.begin(), usable.end(), [](const CheckpointView* a, const CheckpointView* b) {
    return a->step != b->step ? a->step > b->step : a->id > b->id;
  });
  plan_copies(in, *usable.front(), plan);
  plan_deletes(in, usable, plan);
  return plan;
}

std::string replica_path(const std::string& dst_checkpoint_root, std::int64_t job_id,
                         std::int64_t step, const std::string& src_path) {
  std::string base = strip_trailing_slashes(src_path);
  if (const auto slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") base = "checkpoint";
  return job_replica_dir(dst_checkpoint_root, job_id) + "/step-" + std::to_string(step) + "/" +
         base;
}

std::string dataset_path(const std::string& datasets_root, const std::string& name) {
  return join_path(datasets_root, name);
}

}  // namespace orch
