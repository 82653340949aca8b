#pragma once
// A small stand-in for Kueue (kueue.sigs.k8s.io), the queueing layer many rented Kubernetes
// clusters run: Jobs created with `spec.suspend: true` and the label
// kueue.x-k8s.io/queue-name=<LocalQueue> wait until the queue admits them, which Kueue does by
// unsuspending the Job when the queue's quota has room. Here a queue is a name with a GPU
// quota; every pass admits, in creation order, the suspended Jobs whose GPUs (parallelism x
// the pod template's nvidia.com/gpu limit) fit next to the admitted, unfinished Jobs of their
// queue. A Job naming a queue that does not exist waits (as Kueue's workload is inadmissible).

#include <map>
#include <mutex>
#include <string>

#include "testkit/fake_kube/object_store.h"

namespace orch::fake_kube {

inline constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";

class FakeKueue {
 public:
  // Creates or resizes a queue (gpus 0: admits nothing more; what runs keeps running).
  void set_quota(const std::string& queue, long long gpus);
  // One pass over the Jobs (the cluster's control loop, under its lock).
  void admit(ObjectStore& store);

 private:
  std::mutex mu_;
  std::map<std::string, long long> quota_;
};

// The GPUs a Job asks for: parallelism x its pod template's nvidia.com/gpu limit.
long long job_gpus(const json& job);

}  // namespace orch::fake_kube
