#include "adapters/kubernetes/kube_pushed.h"

#include <algorithm>
#include <map>
#include <string>

#include "scheduler/model/gang_verdict.h"
#include "scheduler/model/task_fault.h"

namespace orch::kube {
namespace {

int rank_of(const PodInfo& pod) {
  return pod.completion_index.value_or(0);
}

bool runs(const PodInfo& pod) {
  return pod.phase == "Running" && !pod.deleting;
}

// The pods by rank (the newest seen wins: an Indexed Job has one pod per index).
std::map<int, const PodInfo*> by_rank(const std::vector<PodInfo>& pods) {
  std::map<int, const PodInfo*> out;
  for (const PodInfo& p : pods) out[rank_of(p)] = &p;
  return out;
}

bool is_fault_cause(std::optional<ExitCause> cause) {
  return cause == ExitCause::gpu_xid || cause == ExitCause::gpu_ecc;
}

TaskView task_view(const PushedTask& task, const PodInfo& pod) {
  TaskView v;
  v.rank = task.rank;
  v.node = pod.node_name;
  v.started = true;
  v.exited = task.event == "exit";
  v.alive = !v.exited;
  v.exit_code = task.exit_code;
  v.signal = task.signal;
  if (v.exited) v.exit_at_ms = task.at_ms;
  v.last_record_ms = task.received_ms;
  v.fault = task.fault;
  return v;
}

// The timeout the gang judge gets: the pods' heartbeat timeout, or 0 (no silence judged) in
// the cases the header lists.
std::int64_t judged_timeout(const std::vector<PodInfo>& pods, const std::vector<TaskView>& views,
                            const PushClock& clock) {
  std::int64_t timeout = 0;
  for (const PodInfo& p : pods) timeout = std::max(timeout, p.heartbeat_timeout_ms.value_or(0));
  if (timeout <= 0 || clock.now_ms < clock.serving_since_ms + timeout) return 0;
  int live = 0, silent = 0;
  for (const TaskView& v : views) {
    if (!v.alive) continue;
    ++live;
    if (clock.now_ms - v.last_record_ms.value_or(clock.now_ms) >= timeout) ++silent;
  }
  return live >= 2 && silent == live ? 0 : timeout;
}

}  // namespace

PushedVerdict judge_pushed(const std::vector<PodInfo>& pods, const std::vector<PushedTask>& tasks,
                           const PushClock& clock) {
  PushedVerdict out;
  const auto pod_at = by_rank(pods);
  int gang = 1;
  for (const PodInfo& p : pods) gang = std::max(gang, p.gang_size.value_or(1));
  bool all_run = static_cast<int>(pod_at.size()) == gang;
  for (const auto& [rank, pod] : pod_at) all_run = all_run && runs(*pod);
  std::vector<TaskView> views;
  for (const PushedTask& t : tasks) {
    const auto pod = pod_at.find(t.rank);
    if (pod == pod_at.end() || !runs(*pod->second)) continue;
    views.push_back(task_view(t, *pod->second));
    if (t.stall && !views.back().exited) {
      TaskAlert a = *t.stall;
      if (a.node.empty()) a.node = pod->second->node_name;
      if (a.rank < 0) a.rank = t.rank;
      out.alerts.push_back(std::move(a));
    }
  }
  if (!all_run || views.empty()) return out;
  const GangVerdict g = judge_gang(views, clock.now_ms, judged_timeout(pods, views, clock));
  if (g.phase != RunPhase::exited || !g.exit) return out;
  if (g.exit->cause == ExitCause::node_lost) {
    out.exit = g.exit;
    out.exit->detail += " (its pod still Running in the API; records pushed home)";
  } else if (is_fault_cause(g.exit->cause)) {
    out.exit = g.exit;
  }
  return out;
}

std::optional<ExitStatus> pushed_fault(const std::vector<PodInfo>& pods,
                                       const std::vector<PushedTask>& tasks) {
  const PushedTask* first = nullptr;
  for (const PushedTask& t : tasks) {
    if (!t.fault) continue;
    if (first == nullptr || t.fault->at_ms < first->fault->at_ms ||
        (t.fault->at_ms == first->fault->at_ms && t.rank < first->rank)) {
      first = &t;
    }
  }
  if (first == nullptr) return std::nullopt;
  const auto pod_at = by_rank(pods);
  const auto pod = pod_at.find(first->rank);
  std::string node = pod != pod_at.end() ? pod->second->node_name : first->fault->node;
  if (node.empty()) node = first->fault->node;
  return fault_exit_status(*first->fault, node, first->rank);
}

}  // namespace orch::kube
