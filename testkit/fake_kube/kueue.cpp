#include "testkit/fake_kube/kueue.h"

#include <algorithm>
#include <vector>

#include "testkit/fake_kube/job_controller.h"
#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {

long long job_gpus(const json& job) {
  const json pod = {{"spec", at_path(job, {"spec", "template", "spec"})}};
  return int_at(job, {"spec", "parallelism"}, 1) * pod_gpus(pod);
}

void FakeKueue::set_quota(const std::string& queue, long long gpus) {
  std::lock_guard lock(mu_);
  quota_[queue] = gpus;
}

void FakeKueue::admit(ObjectStore& store) {
  std::map<std::string, long long> quota;
  {
    std::lock_guard lock(mu_);
    quota = quota_;
  }
  std::vector<json> jobs = store.all("jobs");
  std::stable_sort(jobs.begin(), jobs.end(), [](const json& a, const json& b) {
    return string_at(a, {"metadata", "creationTimestamp"}) <
           string_at(b, {"metadata", "creationTimestamp"});
  });
  std::map<std::string, long long> used;
  for (const json& job : jobs) {
    const std::string queue = string_at(job, {"metadata", "labels", kQueueNameLabel});
    if (queue.empty() || at_path(job, {"spec", "suspend"}) == true || job_finished(job)) continue;
    used[queue] += job_gpus(job);
  }
  for (const json& job : jobs) {
    const std::string queue = string_at(job, {"metadata", "labels", kQueueNameLabel});
    if (queue.empty() || at_path(job, {"spec", "suspend"}) != true) continue;
    auto q = quota.find(queue);
    if (q == quota.end() || used[queue] + job_gpus(job) > q->second) continue;
    used[queue] += job_gpus(job);
    store.update("jobs", string_at(job, {"metadata", "namespace"}),
                 string_at(job, {"metadata", "name"}), [](json& o) {
                   o["spec"]["suspend"] = false;
                   o["metadata"]["annotations"]["kueue.x-k8s.io/admitted-by"] = "fake-kueue";
                 });
  }
}

}  // namespace orch::fake_kube
