#pragma once
// KubernetesSite: a Kubernetes cluster reached through its API server (kubeconfig), behind the
// same ClusterPort as every provider. The manifests and the reading of API objects are pure
// (kube_manifest.h, kube_status.h); this file only talks to the server.
//
//   launch   POST the attempt's Secret (secret_env values, never in the Job), the headless
//            Service (multi-node) and the batch/v1 Job; then PATCH the Secret to be owned by
//            the Job. An AlreadyExists answer is the same launch found again
//   find     the Jobs labelled with the launch token
//   observe  the attempt's pods from the PodInformer's watch cache (a direct list when the
//            cache is not fresh), mapped with the last node list; then the records its agents
//            pushed home (kube_pushed.h): a silent pod's node lost while the API still says
//            Running, a GPU fault, io stalls (kube_site_push.cpp); output from pods/log
//   signal   USR1 (or USR2, INT, HUP) through pods/exec to each running pod's agent, which
//            passes it on to the job: the save signal of preemption (kube_site_push.cpp)
//   cancel   DELETE the Job with propagationPolicy Background (and its Service and Secret;
//            an attempt seen ended has its Secret deleted too)
//   storage  manifest / remove_path: the storage scripts (adapters/storage) through pods/exec
//            in the site's storage helper pod, which mounts the cluster's volumes
//            (kube_site_storage.cpp); copy_out / copy_in: tar streams through the same pod,
//            for transfers to and from this host
//   probes   one probe pod per node, pinned by node affinity; results from their logs
//            (kube_site_probe.cpp)
//
// Every failure to reach the API server is ErrorKind::unreachable (the site is silent, the job
// is not failed).

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_status.h"
#include "adapters/kubernetes/kube_workload.h"
#include "adapters/kubernetes/pod_informer.h"
#include "scheduler/cluster_port.h"
#include "scheduler/site_factory.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/transfer_port.h"

namespace orch {

class KubernetesSite final : public ClusterPort, public SiteCopier {
 public:
  // `push`: where the agents push their records home (issue 44); null: they do not.
  KubernetesSite(ClusterSpec spec, KubeTarget target, const PushHome* push = nullptr);
  ~KubernetesSite() override;

  Result<SiteInventory> inventory() override;
  Result<LaunchResult> launch(const LaunchRequest& request) override;
  Result<std::optional<LaunchResult>> find(const std::string& token) override;
  Result<RunObservation> observe(const std::string& token, std::uint64_t output_offset) override;
  Result<void> cancel(const std::string& token) override;
  // To every running pod's agent (by its pid in the agent's event file), through pods/exec; a
  // pod without a running agent, or a token without pods, is no error.
  Result<void> signal(const std::string& token, const std::string& signal) override;
  Result<std::string> read_output(const std::string& token, std::uint64_t offset,
                                  std::size_t max_bytes) override;
  Result<Manifest> manifest(const ManifestRequest& request) override;
  Result<void> remove_path(const RemoveRequest& request) override;
  Result<std::vector<ProbeResult>> probe_nodes(const ProbeRequest& request) override;
  // Auth, the namespace, RBAC for every verb used, the helper image (kube_site_preflight.cpp).
  std::vector<PreflightCheck> preflight() override;

  // Copies between this site's storage and this host: request.from.path (here) into
  // local_path, or local_path into request.to.path, as a tar stream through pods/exec of the
  // storage helper, capped and reported through `control` (kube_site_copy.cpp). A copy that
  // broke resumes from what arrived (kube_copy_plan.h): complete files are skipped (compared by
  // SHA-256 when request.checksum), partial ones continued from their size and hashed (sent
  // again whole when the hash differs); TransferOutcome::bytes counts what this call sent.
  // Errors: unreachable (also a stream that broke), io (tar failed on either side, its stderr),
  // conflict (stopped), invalid (paths that are not absolute, a file renamed on the way).
  Result<TransferOutcome> copy_out(const TransferRequest& request, const std::string& local_path,
                                   TransferControl& control) override;
  Result<TransferOutcome> copy_in(const TransferRequest& request, const std::string& local_path,
                                  TransferControl& control) override;
  // rsync cannot reach this site's storage: copies go through copy_out / copy_in.
  SiteCopier* copier() override { return this; }

  const kube::PodInformer& informer() const { return *informer_; }

 private:
  friend class KubeSiteCopy;  // a copy_out / copy_in (kube_site_copy.cpp)
  // A request whose non-2xx answer (other than the `ok` codes) is an error quoting the
  // server's Status message.
  Result<KubeResponse> call(const std::string& method, const std::string& path,
                            const std::string& body, std::initializer_list<int> ok);
  // call()'s reading of an answer: the answer, or the error it is.
  Result<KubeResponse> check_answer(const std::string& method, const std::string& path,
                                    KubeResponse answer, std::initializer_list<int> ok);

  // The attempt's Secret (kube_secret.h; kube_site_secret.cpp).
  // POSTs it: true when this call made it, false when it was there from an earlier try of the
  // same launch. A refusal says which RBAC verbs the site's credentials need.
  Result<bool> create_secret(const kube::KubeLaunchPlan& plan);
  // After the Job's POST (`job_answer`, 201 or 409): makes the Job the Secret's owner, writing
  // this try's values into a Secret that was there (`refresh`). A new Job whose Secret cannot
  // be owned is deleted with it (an error); an adopted Job keeps the Secret it had (Ok).
  Result<void> own_secret(const kube::KubeLaunchPlan& plan, const KubeResponse& job_answer,
                          bool adopted, bool refresh);
  // DELETE of the Secret at `path`; a missing one is fine, and so is no answer (the garbage
  // collector, or the next cancel, removes it).
  void delete_secret(const std::string& path);
  // The error of a refused Secret request (`verb`: create, patch).
  Error secret_refused(const std::string& verb, const std::string& secret,
                       const KubeResponse& answer) const;
  Result<std::vector<kube::PodInfo>> pods_of(const std::string& token);
  // The pushed records' say on an attempt the API shows running or ended (kube_pushed.h): may
  // end it (node_lost, a GPU fault: pods_left) and gives its alerts.
  void apply_pushed(const std::string& token, const std::vector<kube::PodInfo>& pods,
                    kube::AttemptView& view, std::vector<TaskAlert>& alerts);
  Result<std::optional<kube::KubeJobInfo>> job_of(const std::string& token);
  // Kueue (kube_site_kueue.cpp): the Job's Workload, none without the Workload API (403/404).
  Result<std::optional<kube::KueueWorkload>> workload_of(const kube::KubeJobInfo& job);
  // With kubernetes.queue, an attempt that is not running: preempted when its Workload was
  // evicted (or, without one, when this process saw it run before its Job was suspended);
  // queued with Kueue's reason for waiting as view.note. Reads `job` when it is not there yet.
  Result<void> read_kueue(const std::string& token, bool ran,
                          std::optional<kube::KubeJobInfo>& job, kube::AttemptView& view);
  // The log of the attempt's first pod (completion index 0), up to `limit` bytes from its start.
  Result<std::string> log_of(const std::vector<kube::PodInfo>& pods, std::size_t limit);

  struct HelperRun {
    int exit_code = 0;
    std::string out;  // stdout and stderr unless an output callback took them
    std::string err;
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
  };
  // "site <name>: " in front of a message that lacks it.
  Error site_error(const Error& e) const;
  // The storage helper pod's name once it runs (created and waited for when needed).
  Result<std::string> storage_helper();
  // Deletes the storage helper when nothing used it for a while (called by inventory()).
  void retire_idle_helper();
  // A pod that ended with kSetupFailedExit: the attempt's setup-failed marker
  // (setup_failed_marker), read through the storage helper, as its end (setup_failed). Left as
  // it is when the marker cannot be read.
  void read_setup_failure(const std::string& token, ExitStatus& exit);
  // `command` in the storage helper through pods/exec.
  Result<HelperRun> run_in_helper(const std::vector<std::string>& command, const ExecInput& input,
                                  const ExecOutput& output, std::chrono::milliseconds timeout);

  // The preflight's namespace and RBAC checks (one SelfSubjectAccessReview per verb).
  PreflightCheck namespace_check();
  PreflightCheck rbac_check();

  ClusterSpec spec_;
  const PushHome* push_ = nullptr;  // the server's; outlives the site
  std::string namespace_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<kube::PodInformer> informer_;
  std::mutex mu_;
  std::vector<kube::KubeNode> nodes_;  // as of the last inventory
  std::set<std::string> ran_;          // tokens seen running (a later suspension is preemption)
  std::mutex helper_mu_;               // the storage helper's state below
  bool helper_running_ = false;
  std::string helper_node_;  // the node the running helper is on
  std::int64_t helper_used_ms_ = 0;
  std::atomic<int> storage_calls_{0};  // run_in_helper calls in progress
  std::mutex probe_mu_;                // one probe round at a time
};

// The SiteMaker of provider kubernetes: loads the kubeconfig (its warnings go to stderr).
Result<std::unique_ptr<ClusterPort>> make_kubernetes_site(const ClusterSpec& cluster,
                                                          const SiteContext& context);

}  // namespace orch
