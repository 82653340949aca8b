#include "cli/site_transfer_port.h"

#include <filesystem>

#include "adapters/kubernetes/kube_site.h"

namespace orch {

namespace {

// The relay folder as rsync's side of a relayed copy sees it: a local "site" of its own.
constexpr const char* kRelaySite = "orchestrate-relay";

std::vector<ClusterSpec> with_relay(std::vector<ClusterSpec> clusters, const std::string& dir) {
  ClusterSpec relay;
  relay.name = kRelaySite;
  relay.provider = "local";
  relay.storage_root = dir;
  clusters.push_back(std::move(relay));
  return clusters;
}

}  // namespace

SiteTransferPort::SiteTransferPort(const std::vector<ClusterSpec>& clusters, std::string work_dir)
    : clusters_(clusters),
      work_dir_(std::move(work_dir)),
      rsync_(std::make_unique<RsyncTransferPort>(with_relay(clusters, work_dir_ + "/relay"),
                                                 work_dir_)) {}

void SiteTransferPort::site_joined(const ClusterSpec& spec, ClusterPort* port) {
  if (clusters_.find(spec.name) == nullptr) {
    clusters_.add({spec});
    rsync_->cluster_joined(spec);
  }
  if (auto* kube = dynamic_cast<KubernetesSite*>(port)) {
    std::lock_guard<std::mutex> lock(mu_);
    kube_[spec.name] = kube;
  }
}

KubernetesSite* SiteTransferPort::kube_site(const std::string& cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kube_.find(cluster);
  return it == kube_.end() ? nullptr : it->second;
}

Result<TransferOutcome> SiteTransferPort::run(const TransferRequest& request,
                                              TransferControl& control) {
  KubernetesSite* from = kube_site(request.from.cluster);
  KubernetesSite* to = kube_site(request.to.cluster);
  if (from == nullptr && to == nullptr) return rsync_->run(request, control);
  const ClusterSpec* other =
      clusters_.find(from != nullptr ? request.to.cluster : request.from.cluster);
  if (other == nullptr) {
    return make_error(ErrorKind::invalid,
                      "transfer " + std::to_string(request.id) + ": unknown cluster");
  }
  const bool other_here = other->provider == "local";
  if (from != nullptr && to == nullptr && other_here) {
    return from->copy_out(request, request.to.path, control);
  }
  if (to != nullptr && from == nullptr && other_here) {
    return to->copy_in(request, request.from.path, control);
  }
  return relay(request, from, to, control);
}

// Through <work_dir>/relay/<id>/ on this host: a tar stream out of a Kubernetes source (or
// rsync from a Slurm one), then a tar stream into a Kubernetes destination (or rsync to a
// Slurm one). The relay copy is removed once the second leg is complete.
Result<TransferOutcome> SiteTransferPort::relay(const TransferRequest& request,
                                                KubernetesSite* from, KubernetesSite* to,
                                                TransferControl& control) {
  namespace fs = std::filesystem;
  const std::string dir = work_dir_ + "/relay/" + std::to_string(request.id);
  const std::string name = fs::path(request.from.path).filename().string();
  const std::string here = request.directory ? dir : dir + "/" + name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  TransferRequest first = request;
  first.to = {kRelaySite, here};
  auto pulled =
      from != nullptr ? from->copy_out(first, here, control) : rsync_->run(first, control);
  if (!pulled) return pulled.error();
  TransferRequest second = request;
  second.from = {kRelaySite, here};
  auto pushed = to != nullptr ? to->copy_in(second, here, control) : rsync_->run(second, control);
  if (!pushed) return pushed.error();
  fs::remove_all(dir, ec);
  TransferOutcome out = *pushed;
  out.seconds += pulled->seconds;
  out.route = "relay via orchestrator (" + pulled->route + ", then " + pushed->route + ")";
  return out;
}

}  // namespace orch
