#pragma once
// How a gang's tasks add up to one attempt's phase (issue 14, docs/launch-contract.md): one
// task's failure ends the attempt for all, and the verdict names the task and node that failed
// first. Pure: providers (local, Slurm) read each task's agent events, build TaskView's, and act
// on the verdict (stop the survivors, report the exit).
//
// In order:
// 0. A GPU fault the agent's live watch recorded (issue 43, task_fault.h) is the root cause of
//    whatever its peers die of next: the earliest fault (then the lowest rank) ends the attempt
//    with its cause (gpu_xid, gpu_ecc), node and detail, unless every task exited 0.
// 1. A lost node explains its peers' failures (a collective library fails every rank when one
//    dies), so it wins: a task whose agent vanished (dead, no exit record) while another task of
//    the gang did not, or a live task silent (no record at all) for heartbeat_timeout_ms. The
//    verdict is node_lost on that task's node (the longest silent, then the lowest rank).
// 2. Else the task that exited first with a non-zero code or a signal: its exit is the
//    attempt's, on its node.
// 3. Else, every task exited 0: succeeded. Tasks still running with others done: running.
// 4. Every task vanished together (an outage or a kill of the whole run, not one node): the
//    attempt's exit is SIGKILL, "agent vanished without an exit record", as for one task.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/site_types.h"
#include "scheduler/model/task_fault.h"

namespace orch {

struct TaskView {
  int rank = 0;
  std::string node;
  bool alive = false;   // its agent holds its lock
  bool started = true;  // its agent wrote its start record (or left its pid)
  bool exited = false;  // its agent wrote its exit record
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<std::int64_t> exit_at_ms;
  std::optional<std::int64_t> last_record_ms;  // when its agent last wrote anything
  std::optional<TaskFault> fault;              // its newest record's GPU fault, if any
};

struct GangVerdict {
  RunPhase phase = RunPhase::running;  // running, or exited with `exit`
  std::optional<ExitStatus> exit;
  int failed_task = -1;  // the task whose end is the attempt's; -1: none (success, all vanished)
};

// heartbeat_timeout_ms 0: silence is never judged.
GangVerdict judge_gang(const std::vector<TaskView>& tasks, std::int64_t now_ms,
                       std::int64_t heartbeat_timeout_ms);

}  // namespace orch
