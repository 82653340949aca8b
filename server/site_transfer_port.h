#pragma once
// The server's TransferPort: rsync (RsyncTransferPort, adapters/transfer) between the sites
// this host reaches with rsync (local and Slurm), and the site's own SiteCopier
// (scheduler/transfer_port.h; a Kubernetes site's tar streams through pods/exec) when one end's
// port has one (ClusterPort::copier()):
//   copier site -> site on this host's file system    copy_out into the local path
//   site on this host's file system -> copier site    copy_in from the local path
//   copier <-> copier, copier <-> a site over ssh: relayed through <work_dir>/relay/<id>
//                          (copy_out or rsync into it, then copy_in or rsync out of it; rsync
//                          sees the relay as a local site of its own), removed after.
// "On this host's file system" is the provider's data route (DataRoute::local_fs in
// scheduler/spec/provider_catalog.h); no provider is named here.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/transfer/rsync_transfer.h"
#include "scheduler/cluster_port.h"
#include "scheduler/spec/cluster_registry.h"
#include "scheduler/transfer_port.h"

namespace orch {

class SiteTransferPort final : public TransferPort {
 public:
  // state_dir: the server's state directory, whose code/ holds the workdir archives a
  // transfer from kCodeStoreSite (scheduler/model/workdir.h) reads: such a transfer's source
  // path "/code/<sha256>.tar" is read as <state_dir>/code/<sha256>.tar, the store a local site
  // of its own. Empty: no such transfer is accepted.
  SiteTransferPort(const std::vector<ClusterSpec>& clusters, std::string work_dir,
                   std::string state_dir = "");

  // A site the server runs (at start or joined later): a port with a copier is remembered for
  // its copies; every cluster is routed from now.
  void site_joined(const ClusterSpec& spec, ClusterPort* port);

  Result<TransferOutcome> run(const TransferRequest& request, TransferControl& control) override;

 private:
  SiteCopier* copier_of(const std::string& cluster);
  // Whether the cluster's storage is this host's file system (its provider's data route).
  bool on_this_host(const std::string& cluster) const;
  Result<TransferOutcome> relay(const TransferRequest& request, SiteCopier* from, SiteCopier* to,
                                TransferControl& control);

  // A transfer from the server's code store, its source made a path of this host.
  Result<TransferRequest> from_code_store(const TransferRequest& request) const;

  ClusterRegistry clusters_;
  std::string work_dir_;
  std::string state_dir_;
  std::unique_ptr<RsyncTransferPort> rsync_;
  std::mutex mu_;
  std::map<std::string, SiteCopier*> copiers_;  // by cluster, those whose port has one
};

}  // namespace orch
