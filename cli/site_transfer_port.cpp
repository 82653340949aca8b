#include "cli/site_transfer_port.h"

#include <filesystem>

#include "adapters/kubernetes/kube_site.h"

namespace orch {

SiteTransferPort::SiteTransferPort(const std::vector<ClusterSpec>& clusters, std::string work_dir)
    : clusters_(clusters),
      work_dir_(std::move(work_dir)),
      rsync_(std::make_unique<RsyncTransferPort>(clusters, work_dir_)) {}

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
  if (from != nullptr) return relay(request, from, control);
  return make_error(ErrorKind::unsupported,
                    "transfer " + std::to_string(request.id) + ": from " + request.from.cluster +
                        " (" + other->provider + ") to Kubernetes site " + request.to.cluster +
                        " is not supported yet; replicate through a local site");
}

Result<TransferOutcome> SiteTransferPort::relay(const TransferRequest& request,
                                                KubernetesSite* from, TransferControl& control) {
  KubernetesSite* to = kube_site(request.to.cluster);
  if (to == nullptr) {
    return make_error(ErrorKind::unsupported,
                      "transfer " + std::to_string(request.id) + ": from Kubernetes site " +
                          request.from.cluster + " to " + request.to.cluster +
                          " (not local, not Kubernetes) is not supported yet");
  }
  namespace fs = std::filesystem;
  const std::string dir = work_dir_ + "/relay/" + std::to_string(request.id);
  const std::string name = fs::path(request.from.path).filename().string();
  const std::string here = request.directory ? dir : dir + "/" + name;
  auto pulled = from->copy_out(request, here, control);
  if (!pulled) return pulled.error();
  TransferRequest second = request;
  if (!request.directory)
    second.to.path = fs::path(request.to.path).parent_path().string() + "/" + name;
  auto pushed = to->copy_in(second, here, control);
  std::error_code ec;
  if (pushed) fs::remove_all(dir, ec);
  if (!pushed) return pushed.error();
  TransferOutcome out = *pushed;
  out.seconds += pulled->seconds;
  out.route = "relay via orchestrator (tar through pods/exec)";
  return out;
}

}  // namespace orch
