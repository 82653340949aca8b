#pragma once
// What the records an attempt's agents pushed home (issue 44, scheduler/pushed_records.h) add to
// what the API server says of its pods. Pure: KubernetesSite reads the records and the pods and
// acts on the verdict (ends the attempt, deleting its Job; raises the alerts).
//
// The rules, those of the Slurm site (adapters/slurm/task_events.h) on the server's clock:
// - Judged only while every pod of the gang (orchestrate.dev/gang-size, else 1) is Running and
//   not being deleted: a pod that ended or is still Pending is the API's to judge (map_attempt).
// - Each pod is the task of its completion index (0 for a single pod), on the pod's node as the
//   API names it (the agent's own name for it is the pod's host name).
// - The same gang judge as local sites (scheduler/model/gang_verdict.h), with each task's last
//   record time = when its newest batch reached the server (received_ms) and the heartbeat
//   timeout of the pods' orchestrate.dev/heartbeat-timeout-ms annotation (none: no silence is
//   judged). Its verdict counts only when it is node_lost or a GPU fault; a task's own exit is
//   the API's to report.
// - No silence is judged before serving_since_ms + the timeout (agents that pushed into a
//   restarting server back off and come back); nor for a task that never pushed (its pod may
//   still pull an image); nor when two or more tasks still run and every one of them is silent
//   at once (the server's view, or its network, not a node: the API's node status covers that).
// - A pushed GPU fault (the agent's live watch) ends the attempt with the fault's cause, also
//   after the pods ended (pushed_fault: a job that the fault killed or that the agent stopped).
// - io_stall: each running task's stall becomes an alert with its pod's node and its rank.

#include <cstdint>
#include <optional>
#include <vector>

#include "adapters/kubernetes/kube_status.h"
#include "scheduler/model/site_types.h"
#include "scheduler/pushed_records.h"

namespace orch::kube {

struct PushClock {
  std::int64_t now_ms = 0;            // the server's clock (PushedRecordSource::now_ms)
  std::int64_t serving_since_ms = 0;  // PushedRecordSource::serving_since_ms
};

struct PushedVerdict {
  std::optional<ExitStatus> exit;  // node_lost (silence) or a GPU fault: the attempt ends
  std::vector<TaskAlert> alerts;   // io stalls of tasks whose pods run
};

// For an attempt the API shows running.
PushedVerdict judge_pushed(const std::vector<PodInfo>& pods, const std::vector<PushedTask>& tasks,
                           const PushClock& clock);

// The earliest pushed GPU fault (then the lowest rank) as the attempt's end, for an attempt whose
// pods ended; nullopt when no task pushed one.
std::optional<ExitStatus> pushed_fault(const std::vector<PodInfo>& pods,
                                       const std::vector<PushedTask>& tasks);

}  // namespace orch::kube
