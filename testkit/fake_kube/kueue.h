#pragma once
// A small stand-in for Kueue (kueue.sigs.k8s.io), the queueing layer many rented Kubernetes
// clusters run: Jobs created with `spec.suspend: true` and the label
// kueue.x-k8s.io/queue-name=<LocalQueue> wait until the queue admits them, which Kueue does by
// unsuspending the Job when the queue's quota has room. Here a queue is a name with a GPU
// quota; every pass admits, in creation order, the suspended Jobs whose GPUs (parallelism x
// the pod template's nvidia.com/gpu limit) fit next to the admitted, unfinished Jobs of their
// queue. A Job naming a queue that does not exist waits (as Kueue's workload is inadmissible).
//
// Each such Job has a Workload (kueue.x-k8s.io/v1beta1) as Kueue writes it (issue 44): named
// job-<job>-<5 hex digits>, labelled kueue.x-k8s.io/job-uid, owned by the Job, with the
// conditions QuotaReserved (False with Kueue's reason for waiting), Admitted, PodsReady,
// Evicted (preempt()) and Finished.

#include <map>
#include <mutex>
#include <string>

#include "testkit/fake_kube/object_store.h"

namespace orch::fake_kube {

inline constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr const char* kWorkloadJobUidLabel = "kueue.x-k8s.io/job-uid";

class FakeKueue {
 public:
  // Creates or resizes a queue (gpus 0: admits nothing more; what runs keeps running).
  void set_quota(const std::string& queue, long long gpus);
  // One pass over the Jobs (the cluster's control loop, under its lock): Workloads made and
  // brought up to date, Jobs that fit admitted.
  void admit(ObjectStore& store);
  // Kueue's preemption of the Job: its Workload Evicted (reason Preempted), QuotaReserved and
  // Admitted False, the Job suspended (its pods deleted by the job controller). False when the
  // Job does not exist.
  bool preempt(ObjectStore& store, const std::string& ns, const std::string& job);

 private:
  std::mutex mu_;  // held for a whole pass, so a preemption never lands in the middle of one
  std::map<std::string, long long> quota_;
};

// The GPUs a Job asks for: parallelism x its pod template's nvidia.com/gpu limit.
long long job_gpus(const json& job);

// The name real Kueue gives a Job's Workload: job-<name>-<5 hex digits of a hash of the Job's
// kind, group, name and uid> (Kueue hashes with SHA-1, this with SHA-256: same shape).
std::string workload_name(const json& job);

}  // namespace orch::fake_kube
