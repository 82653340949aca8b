#pragma once
// RsyncTransferPort: TransferPort (scheduler/transfer_port.h) with real rsync over OpenSSH.
//
// The route comes from the two clusters' specs (transfer_route.h): between local sites a local
// rsync; a Slurm destination whose data.pull_from names the source runs rsync on its login
// node, pulling; a Slurm site and a local one: rsync here pulls or pushes over ssh; two Slurm
// sites that cannot reach each other: relay, pulled into <work_dir>/relay/<id>/ here, then
// pushed, the relay copy removed once the push is complete. Kubernetes: unsupported.
//
// Each run is watched (rsync_run.h): progress to the caller at most 4 times a second, the cap
// read about once a second (a new cap stops rsync, SIGTERM so --partial keeps what arrived, and
// starts it again with the new --bwlimit), stop requests at once, and a process silent for
// stall_timeout killed (ErrorKind::io). The pull route's rsync runs on a login node: it is
// stopped there too, by the process group its shell recorded in a pid file.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/spec/cluster_registry.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/transfer_port.h"

namespace orch {

namespace transfer {
class LoginEndpoints;
struct RoutePlan;
}  // namespace transfer

class RsyncTransferPort final : public TransferPort {
 public:
  struct Options {
    std::chrono::milliseconds stall_timeout{120000};  // a run silent this long is killed
    std::chrono::milliseconds stop_grace{10000};      // SIGTERM, then SIGKILL after this
    std::chrono::milliseconds progress_every{250};    // at most 4 progress calls a second
    std::chrono::milliseconds cap_check_every{1000};  // control.cap_bytes_per_s()
  };

  // work_dir: private to this port (relay copies, generated known_hosts); made on first use.
  RsyncTransferPort(const std::vector<ClusterSpec>& clusters, const std::string& work_dir);
  RsyncTransferPort(const std::vector<ClusterSpec>& clusters, const std::string& work_dir,
                    Options options);
  ~RsyncTransferPort() override;

  Result<TransferOutcome> run(const TransferRequest& request, TransferControl& control) override;
  // A cluster that joined the running server: routes to and from it from now.
  void cluster_joined(const ClusterSpec& spec) { clusters_.add({spec}); }

 private:
  struct Leg;
  class Runner;
  Result<std::vector<Leg>> legs_for(const transfer::RoutePlan& plan,
                                    const TransferRequest& request);

  ClusterRegistry clusters_;
  std::string work_dir_;
  Options options_;
  std::unique_ptr<transfer::LoginEndpoints> logins_;
  std::atomic<unsigned> runs_{0};
};

}  // namespace orch
