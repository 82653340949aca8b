#include "testkit/fake_kube/kueue.h"

#include <algorithm>
#include <vector>

#include "scheduler/common/sha256.h"
#include "testkit/fake_kube/job_controller.h"
#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/pod_status.h"

namespace orch::fake_kube {
namespace {

constexpr std::size_t kMaxWorkloadPrefix = 252 - 5;  // Kueue's: a CRD name, "-", the hash

json new_workload(const json& job, const std::string& queue) {
  const std::string uid = string_at(job, {"metadata", "uid"});
  return {
      {"apiVersion", "kueue.x-k8s.io/v1beta1"},
      {"kind", "Workload"},
      {"metadata",
       {{"name", workload_name(job)},
        {"namespace", string_at(job, {"metadata", "namespace"})},
        {"labels", {{kWorkloadJobUidLabel, uid}}},
        {"ownerReferences", json::array({{{"apiVersion", "batch/v1"},
                                          {"kind", "Job"},
                                          {"name", string_at(job, {"metadata", "name"})},
                                          {"uid", uid},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}})}}},
      {"spec",
       {{"active", true},
        {"queueName", queue},
        {"priority", 0},
        {"podSets",
         json::array({{{"name", "main"}, {"count", int_at(job, {"spec", "parallelism"}, 1)}}})}}},
      {"status", {{"conditions", json::array()}}}};
}

// Brings the Workload of `job` up to date with the Job (`admitted_now`: this pass admits it;
// `waiting`: why it cannot be admitted, when it is suspended and not admitted now).
void update_workload(ObjectStore& store, const json& job, bool admitted_now,
                     const std::string& waiting_reason, const std::string& waiting) {
  const std::string ns = string_at(job, {"metadata", "namespace"});
  const std::string queue = string_at(job, {"metadata", "labels", kQueueNameLabel});
  const std::string name = workload_name(job);
  if (!store.get("workloads", ns, name)) store.create("workloads", new_workload(job, queue));
  store.update("workloads", ns, name, [&](json& w) {
    if (job_finished(job)) {
      const bool ok = condition_status(job, "Complete") == "True";
      set_condition(w, "Finished", "True", ok ? "Succeeded" : "Failed",
                    ok ? "Job finished successfully" : "Job failed");
      return;
    }
    const bool running = at_path(job, {"spec", "suspend"}) != true;
    if (running || admitted_now) {
      for (const char* type : {"Evicted", "Preempted"}) {
        if (condition_status(w, type) != "True") continue;
        std::string before;
        for (const json& c : w["status"]["conditions"]) {
          if (string_at(c, {"type"}) == type) before = string_at(c, {"message"});
        }
        set_condition(w, type, "False", "QuotaReserved", "Previously: " + before);
      }
      set_condition(w, "QuotaReserved", "True", "QuotaReserved",
                    "Quota reserved in ClusterQueue cluster-queue");
      set_condition(w, "Admitted", "True", "Admitted", "The workload is admitted");
      const bool ready =
          int_at(job, {"status", "ready"}, 0) + int_at(job, {"status", "succeeded"}, 0) >=
          int_at(job, {"spec", "parallelism"}, 1);
      set_condition(w, "PodsReady", ready ? "True" : "False", ready ? "PodsReady" : "WaitForStart",
                    ready ? "All pods reached readiness and the workload is running"
                          : "Not all pods are ready or succeeded");
      return;
    }
    if (condition_status(w, "Evicted") == "True") return;  // preempted: stays as preempt() left it
    set_condition(w, "QuotaReserved", "False", waiting_reason, waiting);
  });
}

}  // namespace

long long job_gpus(const json& job) {
  const json pod = {{"spec", at_path(job, {"spec", "template", "spec"})}};
  return int_at(job, {"spec", "parallelism"}, 1) * pod_gpus(pod);
}

std::string workload_name(const json& job) {
  const std::string name = string_at(job, {"metadata", "name"});
  std::string prefix = "job-" + name;
  if (prefix.size() > kMaxWorkloadPrefix) prefix.resize(kMaxWorkloadPrefix);
  const std::string hash =
      sha256_hex("Job\nbatch\n" + name + "\n" + string_at(job, {"metadata", "uid"}));
  return prefix + "-" + hash.substr(0, 5);
}

void FakeKueue::set_quota(const std::string& queue, long long gpus) {
  std::lock_guard lock(mu_);
  quota_[queue] = gpus;
}

void FakeKueue::admit(ObjectStore& store) {
  std::lock_guard lock(mu_);
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
    if (queue.empty() || !at_path(job, {"metadata", "deletionTimestamp"}).is_null()) continue;
    auto q = quota_.find(queue);
    const bool suspended = at_path(job, {"spec", "suspend"}) == true && !job_finished(job);
    const bool fits = q != quota_.end() && used[queue] + job_gpus(job) <= q->second;
    if (!suspended || !fits) {
      const long long more = q == quota_.end() ? 0 : used[queue] + job_gpus(job) - q->second;
      update_workload(store, job, false, q == quota_.end() ? "Inadmissible" : "Pending",
                      q == quota_.end()
                          ? "LocalQueue " + queue + " doesn't exist"
                          : "couldn't assign flavors to pod set main: insufficient unused quota "
                            "for nvidia.com/gpu in flavor default-flavor, " +
                                std::to_string(more) + " more needed");
      continue;
    }
    used[queue] += job_gpus(job);
    update_workload(store, job, true, "", "");
    store.update("jobs", string_at(job, {"metadata", "namespace"}),
                 string_at(job, {"metadata", "name"}), [](json& o) {
                   o["spec"]["suspend"] = false;
                   o["metadata"]["annotations"]["kueue.x-k8s.io/admitted-by"] = "fake-kueue";
                 });
  }
}

bool FakeKueue::preempt(ObjectStore& store, const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu_);
  auto job = store.update("jobs", ns, name, [](json& j) { j["spec"]["suspend"] = true; });
  if (!job) return false;
  const std::string message = "Preempted to accommodate a workload (UID: " + new_uid() +
                              ", JobUID: " + new_uid() +
                              ") due to prioritization in the ClusterQueue";
  store.update("workloads", ns, workload_name(*job), [&](json& w) {
    set_condition(w, "Evicted", "True", "Preempted", message);
    set_condition(w, "Preempted", "True", "InClusterQueue", message);
    set_condition(w, "QuotaReserved", "False", "Preempted", message);
    set_condition(w, "Admitted", "False", "NoReservation", "The workload has no reservation");
  });
  return true;
}

}  // namespace orch::fake_kube
