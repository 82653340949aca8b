#pragma once
// The server's TransferPort: rsync (RsyncTransferPort, adapters/transfer) between the sites
// this host reaches with rsync (local and Slurm), and tar streams through pods/exec
// (KubernetesSite::copy_out / copy_in) when one end is a Kubernetes site:
//   Kubernetes -> local    copy_out into the local path
//   local -> Kubernetes    copy_in from the local path
//   Kubernetes -> Kubernetes, Kubernetes <-> Slurm: relayed through <work_dir>/relay/<id>
//                          (copy_out or rsync into it, then copy_in or rsync out of it; rsync
//                          sees the relay as a local site of its own), removed after.
// Part of the composition root: the only place that knows both kinds of port.

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

class KubernetesSite;

class SiteTransferPort final : public TransferPort {
 public:
  SiteTransferPort(const std::vector<ClusterSpec>& clusters, std::string work_dir);

  // A site the server runs (at start or joined later): Kubernetes sites are remembered for
  // their copies; every cluster is routed from now.
  void site_joined(const ClusterSpec& spec, ClusterPort* port);

  Result<TransferOutcome> run(const TransferRequest& request, TransferControl& control) override;

 private:
  KubernetesSite* kube_site(const std::string& cluster);
  Result<TransferOutcome> relay(const TransferRequest& request, KubernetesSite* from,
                                KubernetesSite* to, TransferControl& control);

  ClusterRegistry clusters_;
  std::string work_dir_;
  std::unique_ptr<RsyncTransferPort> rsync_;
  std::mutex mu_;
  std::map<std::string, KubernetesSite*> kube_;
};

}  // namespace orch
