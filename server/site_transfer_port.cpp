#include "server/site_transfer_port.h"

#include <filesystem>

#include "scheduler/model/workdir.h"
#include "scheduler/spec/provider_catalog.h"

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

// The server's code store (issue 40) as a local site of its own, for rsync and for the
// copiers' "on this host" test.
ClusterSpec code_store_site(const std::string& state_dir) {
  ClusterSpec store;
  store.name = std::string(kCodeStoreSite);
  store.provider = "local";
  store.storage_root = state_dir + "/code";
  return store;
}

}  // namespace

SiteTransferPort::SiteTransferPort(const std::vector<ClusterSpec>& clusters, std::string work_dir,
                                   std::string state_dir)
    : clusters_(clusters),
      work_dir_(std::move(work_dir)),
      state_dir_(std::move(state_dir)),
      rsync_(std::make_unique<RsyncTransferPort>(with_relay(clusters, work_dir_ + "/relay"),
                                                 work_dir_)) {
  if (!state_dir_.empty()) {
    clusters_.add({code_store_site(state_dir_)});
    rsync_->cluster_joined(code_store_site(state_dir_));
  }
}

Result<TransferRequest> SiteTransferPort::from_code_store(const TransferRequest& request) const {
  const std::string& path = request.from.path;
  const std::string prefix = "/code/";
  const std::string suffix = ".tar";
  const bool named = path.size() == prefix.size() + 64 + suffix.size() &&
                     path.starts_with(prefix) && path.ends_with(suffix) &&
                     is_code_sha256(std::string_view(path).substr(prefix.size(), 64));
  if (state_dir_.empty() || !named) {
    return make_error(ErrorKind::invalid, "transfer " + std::to_string(request.id) +
                                              ": the server's code store holds no '" + path + "'");
  }
  TransferRequest out = request;
  out.from.path = state_dir_ + path;
  return out;
}

void SiteTransferPort::site_joined(const ClusterSpec& spec, ClusterPort* port) {
  if (clusters_.find(spec.name) == nullptr) {
    clusters_.add({spec});
    rsync_->cluster_joined(spec);
  }
  if (SiteCopier* copier = port != nullptr ? port->copier() : nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    copiers_[spec.name] = copier;
  }
}

SiteCopier* SiteTransferPort::copier_of(const std::string& cluster) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = copiers_.find(cluster);
  return it == copiers_.end() ? nullptr : it->second;
}

bool SiteTransferPort::on_this_host(const std::string& cluster) const {
  const ClusterSpec* spec = clusters_.find(cluster);
  const ProviderTraits* traits = spec != nullptr ? find_provider(spec->provider) : nullptr;
  return traits != nullptr && traits->data_route == DataRoute::local_fs;
}

Result<TransferOutcome> SiteTransferPort::run(const TransferRequest& given,
                                              TransferControl& control) {
  TransferRequest request = given;
  if (request.from.cluster == kCodeStoreSite) {
    auto local = from_code_store(given);
    if (!local) return local.error();
    request = std::move(*local);
  }
  SiteCopier* from = copier_of(request.from.cluster);
  SiteCopier* to = copier_of(request.to.cluster);
  if (from == nullptr && to == nullptr) return rsync_->run(request, control);
  const std::string& other = from != nullptr ? request.to.cluster : request.from.cluster;
  if (clusters_.find(other) == nullptr) {
    return make_error(ErrorKind::invalid,
                      "transfer " + std::to_string(request.id) + ": unknown cluster");
  }
  const bool other_here = on_this_host(other);
  if (from != nullptr && to == nullptr && other_here) {
    return from->copy_out(request, request.to.path, control);
  }
  if (to != nullptr && from == nullptr && other_here) {
    return to->copy_in(request, request.from.path, control);
  }
  return relay(request, from, to, control);
}

// Through <work_dir>/relay/<id>/ on this host: the source's copier (or rsync from a site over
// ssh), then the destination's copier (or rsync to a site over ssh). The relay copy is removed
// once the second leg is complete.
Result<TransferOutcome> SiteTransferPort::relay(const TransferRequest& request, SiteCopier* from,
                                                SiteCopier* to, TransferControl& control) {
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
