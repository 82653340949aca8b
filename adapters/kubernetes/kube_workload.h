#pragma once
// Kueue's Workload (kueue.x-k8s.io/v1beta1, issue 44): the object Kueue makes for each Job it
// queues, owned by the Job, named job-<job name>-<5 hex digits> and labelled
// kueue.x-k8s.io/job-uid=<the Job's uid>. Its conditions say what Kueue did with the Job
// whatever this process saw: QuotaReserved (False while it waits, the message saying why),
// Admitted, Evicted (True with reason Preempted when another workload took its quota),
// PodsReady, Finished. Pure: parsed from JSON, tested on fixtures (tests/unit/kube).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/kubernetes/kube_status.h"
#include "scheduler/common/result.h"

namespace orch::kube {

inline constexpr std::string_view kWorkloadJobUidLabel = "kueue.x-k8s.io/job-uid";

struct KueueWorkload {
  std::string name;
  std::string job_uid;     // label kueue.x-k8s.io/job-uid, else the Job's ownerReference uid
  std::string owner_name;  // the owning Job's name ("" when not owned by a Job)
  bool active = true;      // spec.active (false: deactivated)
  std::vector<KubeCondition> conditions;
};

Result<std::vector<KueueWorkload>> parse_workloads(std::string_view json);  // a WorkloadList
Result<KueueWorkload> parse_workload(std::string_view json);                // one Workload

// /apis/kueue.x-k8s.io/v1beta1/namespaces/<ns>/workloads
std::string workloads_path(const std::string& namespace_);
// "kueue.x-k8s.io/job-uid=<uid>" (URL-encode it in a query).
std::string workload_selector(const std::string& job_uid);

// The workload of the Job whose uid is `job_uid` among `workloads` (by the label, or by an
// ownerReference to that uid); nullptr when there is none.
const KueueWorkload* workload_of_job(const std::vector<KueueWorkload>& workloads,
                                     const std::string& job_uid);

// What Kueue says of a Job that is not running.
struct WorkloadState {
  // Evicted is True: Kueue took the Job's quota back (reason Preempted: another workload's
  // priority; also InactiveWorkload, PodsReadyTimeout, ClusterQueueStopped, ...) and suspended
  // it. `cause` is preempted, or gang_timeout for PodsReadyTimeout.
  std::optional<ExitStatus> evicted;
  // QuotaReserved is not True: why the workload waits ("couldn't assign flavors to pod set
  // main: insufficient unused quota for nvidia.com/gpu in flavor default-flavor, 4 more
  // needed"), "" when it does not wait or Kueue said nothing yet.
  std::string waiting;
};
WorkloadState workload_state(const KueueWorkload& workload);

}  // namespace orch::kube
