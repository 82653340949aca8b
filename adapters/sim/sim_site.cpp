// One simulated cluster as a ClusterPort (sim_site.h).
#include "adapters/sim/sim_site.h"

#include <cmath>
#include <set>

#include "scheduler/model/checkpoint_dir.h"

namespace orch::sim {

SimSite::SimSite(SimWorld& world, std::mutex& lock, std::size_t cluster, std::int64_t epoch_ms)
    : world_(world), lock_(lock), cluster_(cluster), epoch_ms_(epoch_ms) {}

Error SimSite::silent() const {
  return make_error(ErrorKind::unreachable,
                    "simulated cluster " + world_.cluster(cluster_).name + " does not answer");
}

Result<SiteInventory> SimSite::inventory() {
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  return world_.inventory(cluster_);
}

Result<LaunchResult> SimSite::launch(const LaunchRequest& request) {
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  return world_.launch(cluster_, request);
}

Result<std::optional<LaunchResult>> SimSite::find(const std::string& token) {
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  return world_.find(cluster_, token);
}

Result<RunObservation> SimSite::observe(const std::string& token, std::uint64_t output_offset) {
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  RunObservation obs = world_.observe(cluster_, token, output_offset);
  if (obs.exit && obs.exit->last_heard_ms) *obs.exit->last_heard_ms += epoch_ms_;
  return obs;
}

Result<void> SimSite::cancel(const std::string& token) {
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  world_.cancel(cluster_, token);
  return Ok{};
}

Result<void> SimSite::signal(const std::string& token, const std::string& signal) {
  (void)token;
  (void)signal;
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  return Ok{};
}

Result<std::string> SimSite::read_output(const std::string& token, std::uint64_t offset,
                                         std::size_t max_bytes) {
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  return world_.read_output(cluster_, token, offset, max_bytes);
}

Result<Manifest> SimSite::manifest(const ManifestRequest& request) {
  if (!request.within.empty()) {
    if (auto confined = confine_path(request.path, request.within); !confined) {
      return make_error(ErrorKind::forbidden,
                        "refusing to list " + request.path + ": " + confined.error().message);
    }
  }
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  auto m = world_.manifest(cluster_, request.path);
  if (!m) {
    return make_error(ErrorKind::not_found, request.path + " does not exist on simulated cluster " +
                                                world_.cluster(cluster_).name);
  }
  if (request.hash == ManifestRequest::Hash::none) {
    for (auto& f : m->files) f.sha256.clear();
  }
  return *m;
}

// A simulated filesystem has no links: confinement is the lexical check alone.
Result<void> SimSite::remove_path(const RemoveRequest& request) {
  auto confined = confine_path(request.path, request.within);
  if (!confined) {
    return make_error(request.within.empty() ? ErrorKind::invalid : ErrorKind::forbidden,
                      "refusing to delete '" + request.path + "': " + confined.error().message);
  }
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  world_.remove(cluster_, *confined);
  return Ok{};
}

Result<std::vector<ProbeResult>> SimSite::probe_nodes(const ProbeRequest& request) {
  std::lock_guard<std::mutex> hold(lock_);
  if (!world_.reachable(cluster_)) return silent();
  const std::set<std::string> asked(request.nodes.begin(), request.nodes.end());
  const auto at_ms = epoch_ms_ + static_cast<std::int64_t>(std::llround(world_.now() * 1000));
  std::vector<ProbeResult> results;
  for (const NodeInfo& n : world_.inventory(cluster_).nodes) {
    if (!n.healthy || (!asked.empty() && !asked.count(n.name))) continue;  // down: no answer
    ProbeResult r;
    r.node = n.name;
    r.hostname = n.name;
    r.at_ms = at_ms;
    r.compute_kind = "gpu-gemm";
    r.raw = "simulated probe of " + n.name;
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace orch::sim
