#include "scheduler/data/code_staging.h"

#include <set>

#include "scheduler/spec/provider_catalog.h"

namespace orch {

namespace {

// The writable volume of a Kubernetes cluster that holds `path`, or nullptr.
const PodVolume* volume_holding(const ClusterSpec& cluster, const std::string& path) {
  for (const PodVolume& v : cluster.kubernetes.pod.volumes) {
    if (v.read_only || v.mount.empty()) continue;
    if (path == v.mount || v.mount == "/" || path.starts_with(v.mount + "/")) return &v;
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> code_route_refusal(const ClusterSpec& cluster) {
  const ProviderTraits* p = find_provider(cluster.provider);
  if (p != nullptr && (p->data_route == DataRoute::local_fs || p->data_route == DataRoute::ssh)) {
    return std::nullopt;
  }
  if (p == nullptr || p->data_route != DataRoute::pod_exec) {
    return "its workdir cannot be staged to provider " + cluster.provider +
           " (local, Slurm and Kubernetes clusters take one)";
  }
  if (cluster.storage_root.empty()) {
    return "its workdir cannot be staged to Kubernetes cluster " + cluster.name +
           ": the cluster has no storage.root (a directory on one of its kubernetes.volumes)";
  }
  if (volume_holding(cluster, cluster.storage_root) == nullptr) {
    std::string mounts;
    for (const PodVolume& v : cluster.kubernetes.pod.volumes) {
      if (v.read_only) continue;
      mounts += (mounts.empty() ? "" : ", ") + v.mount;
    }
    return "its workdir cannot be staged to Kubernetes cluster " + cluster.name +
           ": its storage.root " + cluster.storage_root +
           " is on none of its writable kubernetes.volumes (" +
           (mounts.empty() ? std::string("it has none") : mounts) + ")";
  }
  return std::nullopt;
}

CodeStep next_code_step(const std::optional<CodeCopy>& newest) {
  if (!newest) return CodeStep::start;
  switch (newest->state) {
    case TransferState::done:
      return CodeStep::ready;
    case TransferState::queued:
    case TransferState::running:
    case TransferState::verifying:
      return CodeStep::wait;
    case TransferState::failed:
    case TransferState::cancelled:
      return CodeStep::start;
  }
  return CodeStep::start;
}

std::vector<CodeCopyHeld> code_to_prune(const std::vector<CodeCopyHeld>& held,
                                        const std::vector<CodeUse>& uses, Millis now,
                                        Millis keep_ms) {
  std::set<std::string> in_use;
  for (const CodeUse& u : uses) {
    const bool recent = u.ended_ms && now - *u.ended_ms < keep_ms;
    if (u.live || recent || (!u.live && !u.ended_ms)) in_use.insert(u.sha256);
  }
  std::vector<CodeCopyHeld> out;
  for (const CodeCopyHeld& c : held) {
    if (in_use.count(c.sha256) != 0) continue;
    if (now - c.staged_ms < keep_ms) continue;
    out.push_back(c);
  }
  return out;
}

}  // namespace orch
