// Kueue's Workload objects (kube_workload.h): parsed, found for a Job, and read as what Kueue
// did with it.
#include "adapters/kubernetes/kube_workload.h"

#include "adapters/kubernetes/kube_status_json.h"

namespace orch::kube {
namespace {

using detail::at;
using detail::Json;
using detail::Reader;

// The uid of the Job among the object's ownerReferences, with its name; "" when none is a Job.
void read_job_owner(Reader& r, const Json& metadata, const std::string& p, KueueWorkload& w) {
  const Json* owners = r.array(metadata, "ownerReferences", at(p, "metadata.ownerReferences"));
  if (owners == nullptr) return;
  for (std::size_t i = 0; i < owners->size() && r.ok(); ++i) {
    const Json& o = (*owners)[i];
    const std::string op = at(p, "metadata.ownerReferences", i);
    if (!o.is_object()) {
      r.fail(op, "an object", o);
      return;
    }
    if (r.str(o, "kind", at(op, "kind")) != "Job") continue;
    w.owner_name = r.str(o, "name", at(op, "name"));
    if (w.job_uid.empty()) w.job_uid = r.str(o, "uid", at(op, "uid"));
    return;
  }
}

KueueWorkload read_workload(Reader& r, const Json& obj, const std::string& p) {
  KueueWorkload w;
  const Json* metadata = nullptr;
  w.name = detail::read_name(r, obj, p, &metadata);
  if (!r.ok()) return w;
  if (const Json* labels = r.object(*metadata, "labels", at(p, "metadata.labels"))) {
    w.job_uid =
        r.str(*labels, kWorkloadJobUidLabel, at(p, "metadata.labels[kueue.x-k8s.io/job-uid]"));
  }
  read_job_owner(r, *metadata, p, w);
  if (const Json* spec = r.object(obj, "spec", at(p, "spec"))) {
    if (r.member(*spec, "active") != nullptr)
      w.active = r.boolean(*spec, "active", at(p, "spec.active"));
  }
  if (const Json* status = r.object(obj, "status", at(p, "status"))) {
    w.conditions = detail::read_conditions(r, *status, at(p, "status"));
  }
  return w;
}

}  // namespace

Result<std::vector<KueueWorkload>> parse_workloads(std::string_view json) {
  return detail::parse_list<KueueWorkload>(json, "WorkloadList", read_workload);
}

Result<KueueWorkload> parse_workload(std::string_view json) {
  return detail::parse_one<KueueWorkload>(json, "Workload", read_workload);
}

std::string workloads_path(const std::string& namespace_) {
  return "/apis/kueue.x-k8s.io/v1beta1/namespaces/" + namespace_ + "/workloads";
}

std::string workload_selector(const std::string& job_uid) {
  return std::string(kWorkloadJobUidLabel) + "=" + job_uid;
}

const KueueWorkload* workload_of_job(const std::vector<KueueWorkload>& workloads,
                                     const std::string& job_uid) {
  if (job_uid.empty()) return nullptr;
  for (const auto& w : workloads) {
    if (w.job_uid == job_uid) return &w;
  }
  return nullptr;
}

WorkloadState workload_state(const KueueWorkload& workload) {
  WorkloadState state;
  const KubeCondition* evicted = detail::find_condition(workload.conditions, "Evicted");
  if (evicted != nullptr && evicted->status == "True") {
    ExitStatus e;
    e.cause =
        evicted->reason == "PodsReadyTimeout" ? ExitCause::gang_timeout : ExitCause::preempted;
    e.detail = "Kueue evicted the workload " + workload.name + " (" +
               detail::one_line(detail::reason_and_message(evicted->reason, evicted->message)) +
               ")";
    state.evicted = std::move(e);
    return state;
  }
  if (detail::condition_true(workload.conditions, "QuotaReserved") ||
      detail::condition_true(workload.conditions, "Finished")) {
    return state;
  }
  const KubeCondition* reserved = detail::find_condition(workload.conditions, "QuotaReserved");
  if (reserved != nullptr && !reserved->message.empty()) {
    state.waiting = "Kueue: " + detail::one_line(reserved->message);
  } else if (!workload.active) {
    state.waiting = "Kueue: the workload " + workload.name + " is deactivated (spec.active false)";
  }
  return state;
}

}  // namespace orch::kube
