// KubernetesSite and Kueue (issue 44): an attempt whose Job waits in or was taken back by Kueue,
// read from the Job's Workload (kube_workload.h) whatever this process saw, so that a server
// restarted between the preemption and the next poll still reads it preempted. Without the
// Workload API (no Kueue CRD: 404; not allowed to read it: 403) the site falls back to what
// it saw itself: a Job suspended after it ran here is preempted.
#include "adapters/kubernetes/kube_site.h"
#include "adapters/kubernetes/kube_workload.h"
#include "scheduler/common/percent_encoding.h"

namespace orch {

Result<std::optional<kube::KueueWorkload>> KubernetesSite::workload_of(
    const kube::KubeJobInfo& job) {
  if (job.uid.empty()) return std::optional<kube::KueueWorkload>{};
  auto r = client_->request("GET", kube::workloads_path(namespace_) + "?labelSelector=" +
                                       percent_encode(kube::workload_selector(job.uid)));
  if (!r) return r.error();
  if (r->status == 403 || r->status == 404) return std::optional<kube::KueueWorkload>{};
  auto answer = check_answer("GET", kube::workloads_path(namespace_), std::move(*r), {});
  if (!answer) return answer.error();
  auto workloads = kube::parse_workloads(answer->body);
  if (!workloads) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": " + workloads.error().message);
  }
  const kube::KueueWorkload* w = kube::workload_of_job(*workloads, job.uid);
  if (w == nullptr) return std::optional<kube::KueueWorkload>{};
  return std::optional<kube::KueueWorkload>{*w};
}

Result<void> KubernetesSite::read_kueue(const std::string& token, bool ran,
                                        std::optional<kube::KubeJobInfo>& job,
                                        kube::AttemptView& view) {
  if (spec_.kubernetes.queue.empty() ||
      (view.phase != RunPhase::exited && view.phase != RunPhase::queued)) {
    return Ok{};
  }
  if (!job) {
    auto j = job_of(token);
    if (!j) return j.error();
    job = *j;
  }
  if (!job) return Ok{};
  auto workload = workload_of(*job);
  if (!workload) return workload.error();
  if (*workload) {
    kube::WorkloadState state = kube::workload_state(**workload);
    if (state.evicted) {
      view.phase = RunPhase::exited;
      view.exit = std::move(state.evicted);
      view.pods_left = true;
      return Ok{};
    }
    if (view.phase == RunPhase::queued && !state.waiting.empty()) view.note = state.waiting;
  }
  // No eviction to read (no Workload API, or Kueue admitted it again already): a Job suspended
  // after this process saw it run lost its quota to another workload. Its pods end (SIGTERM,
  // so they read as failed) or are gone.
  if (ran && job->suspended) {
    ExitStatus e;
    e.cause = ExitCause::preempted;
    e.detail = "the Job " + job->name + " was suspended after it ran (Kueue, LocalQueue " +
               (job->queue.empty() ? spec_.kubernetes.queue : job->queue) + ")";
    view.phase = RunPhase::exited;
    view.exit = e;
    view.pods_left = true;
  }
  return Ok{};
}

}  // namespace orch
