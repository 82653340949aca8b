#pragma once
// KubernetesSite: a Kubernetes cluster reached through its API server (kubeconfig), behind the
// same ClusterPort as every provider. The manifests and the reading of API objects are pure
// (kube_manifest.h, kube_status.h); this file only talks to the server.
//
//   launch   POST the headless Service (multi-node) and the batch/v1 Job of the attempt; an
//            AlreadyExists answer is the same launch found again
//   find     the Jobs labelled with the launch token
//   observe  the attempt's pods from the PodInformer's watch cache (a direct list when the
//            cache is not fresh), mapped with the last node list; output from pods/log
//   cancel   DELETE the Job with propagationPolicy Background (and its Service)
//
// Every failure to reach the API server is ErrorKind::unreachable (the site is silent, the job
// is not failed).

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/kube_status.h"
#include "adapters/kubernetes/pod_informer.h"
#include "scheduler/cluster_port.h"
#include "scheduler/site_factory.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

class KubernetesSite final : public ClusterPort {
 public:
  KubernetesSite(ClusterSpec spec, KubeTarget target);
  ~KubernetesSite() override;

  Result<SiteInventory> inventory() override;
  Result<LaunchResult> launch(const LaunchRequest& request) override;
  Result<std::optional<LaunchResult>> find(const std::string& token) override;
  Result<RunObservation> observe(const std::string& token, std::uint64_t output_offset) override;
  Result<void> cancel(const std::string& token) override;
  Result<std::string> read_output(const std::string& token, std::uint64_t offset,
                                  std::size_t max_bytes) override;

  const kube::PodInformer& informer() const { return *informer_; }

 private:
  // A request whose non-2xx answer (other than the `ok` codes) is an error quoting the
  // server's Status message.
  Result<KubeResponse> call(const std::string& method, const std::string& path,
                            const std::string& body, std::initializer_list<int> ok);
  Result<std::vector<kube::PodInfo>> pods_of(const std::string& token);
  Result<std::optional<kube::KubeJobInfo>> job_of(const std::string& token);
  // The log of the attempt's first pod (completion index 0), up to `limit` bytes from its start.
  Result<std::string> log_of(const std::vector<kube::PodInfo>& pods, std::size_t limit);

  ClusterSpec spec_;
  std::string namespace_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<kube::PodInformer> informer_;
  std::mutex mu_;
  std::vector<kube::KubeNode> nodes_;  // as of the last inventory
};

// The SiteMaker of provider kubernetes: loads the kubeconfig (its warnings go to stderr).
Result<std::unique_ptr<ClusterPort>> make_kubernetes_site(const ClusterSpec& cluster,
                                                          const SiteContext& context);

}  // namespace orch
