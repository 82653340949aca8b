#pragma once
// The tasks of a Slurm attempt as the site sees them on a poll (issue 14, docs/launch-contract.md):
// each task runs under `orchestrate-agent run`, which appends its records (start, heartbeat,
// progress, checkpoint, hang, exit; agents/README.md) to <run dir>/tasks/<rank>.events.jsonl on
// the cluster's shared filesystem. A poll reads the newest record of each task (observe_command.h)
// and the rules here turn them into what the attempt's observation says. Pure: no I/O.
//
// The rules:
// - Heartbeat (silent_task): while Slurm says the job is RUNNING, a task whose newest record is
//   not its exit and is at least heartbeat_timeout_s old on the cluster's own clock (`date` on the
//   login node, never ours) has lost its node: the longest silent task, then the lowest rank.
//   Not judged: a task without any record yet (srun may be slow to start it; a node that cannot
//   take its tasks makes srun fail the step itself, and a node that dies before its agent
//   writes is Slurm's NODE_FAIL), a newest line that does not parse (a torn or cut line: judged
//   on the next poll), jobs in any other state (COMPLETING after a cancel, SUSPENDED), attempts
//   launched with heartbeat_s or heartbeat_timeout_s 0, and a gang on two or more nodes whose
//   every node is silent at once: that is the login node's view of the shared filesystem (or
//   its clock), not a node, and Slurm's own NODE_FAIL still covers it.
// - GPU fault (faulted_task, issue 43): a task whose newest record states a fault of the agent's
//   live watch (a `fault` record, or the `fault` member every later record repeats;
//   scheduler/model/task_fault.h) ends the attempt with the fault's cause (gpu_xid, gpu_ecc),
//   node, rank and detail: the earliest fault, then the lowest rank. While Slurm says RUNNING the
//   site records it and cancels the job, as for a lost node; a job that already ended (the agent
//   stopped it, --fault-action stop, or it died of the fault) ends with the fault's cause.
// - The node lost (or the fault) is recorded in the run directory's node_lost file
//   (NodeLostMarker), which wins over whatever Slurm says of the job afterwards (the cancel that
//   follows it is CANCELLED).
// - After the job ended (failed_node_after_end): for FAILED and OUT_OF_MEMORY the node of the
//   task whose exit record came first among those with a non-zero exit code or a signal (the
//   others were stopped by srun --kill-on-bad-exit after it); for NODE_FAIL and BOOT_FAIL the
//   node of the task silent longest among those without an exit record. Otherwise (a cancel,
//   a time limit, success) no node is named.
// A task's node is its records' "node" field, else the job's node list at rank / tasks_per_node
// (srun's block distribution, which the agent enforces).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/model/site_types.h"
#include "scheduler/model/task_alert.h"
#include "scheduler/model/task_fault.h"

namespace orch::slurm {

// <run dir>/gang, written at launch (the observer gets only a token): one line
// "tasks=<n> tasks_per_node=<k> heartbeat_s=<s> heartbeat_timeout_s=<s>".
struct GangFile {
  int tasks = 1;
  int tasks_per_node = 1;
  double heartbeat_s = 0;
  double heartbeat_timeout_s = 0;
};
std::string gang_file_line(const LaunchRequest& request);
// nullopt unless every key is there with a valid value (tasks and tasks_per_node >= 1,
// seconds >= 0); unknown keys are skipped.
std::optional<GangFile> parse_gang_file(std::string_view line);

// A number of seconds as the agent's flags and the gang file take it: "5", "0.5".
std::string seconds_text(double seconds);

// One task's newest record (the last line of its event file).
struct TaskRecord {
  int rank = -1;          // from the file's name
  bool empty = false;     // the file has no line yet: the task has not started
  bool readable = false;  // the line parsed as a record with "event" and "at_ms"
  std::string event;      // start, heartbeat, progress, checkpoint, hang, exit, ...
  std::string node;       // "" when the record does not name it
  std::int64_t at_ms = 0;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<TaskFault> fault;  // the live watch's GPU fault, when the record states one
  std::optional<TaskAlert> stall;  // a save stalled past its bound (issue 43, task_alert.h)
};
// The record on one line of an event file (`rank` as given); readable false when it is not a
// JSON object with a string "event" and an integer "at_ms".
TaskRecord parse_task_record(int rank, std::string_view line);

// <run dir>/node_lost: why the site ended the attempt, one JSON line: a lost node, or a task's
// GPU fault (then "fault" holds it).
struct NodeLostMarker {
  std::string node;
  int task = -1;
  std::string detail;  // "no heartbeat from task 2 on alpha-n3 for 31 s"
  std::optional<TaskFault> fault;
};
std::string marker_line(const NodeLostMarker& marker);
std::optional<NodeLostMarker> parse_marker(std::string_view line);
// exited, node_lost, cause node_lost, failed_node and detail from the marker.
ExitStatus node_lost_status(const NodeLostMarker& marker);
// The attempt's end the marker records: the fault's (fault_exit_status) when it holds one, else
// node_lost_status.
ExitStatus marker_status(const NodeLostMarker& marker);

// What one poll read of an attempt's run directory.
struct TaskSnapshot {
  std::optional<GangFile> gang;          // none: launched before heartbeats (no rule applies)
  std::optional<NodeLostMarker> marker;  // set once a node loss was recorded
  std::vector<TaskRecord> tasks;         // the event files found, by rank
  // The run directory's setup_failed marker (issue 40): "exit N" and the setup's last lines.
  std::optional<std::string> setup_failed;
};

// The io stalls the tasks' newest records state (issue 43), each with its task's node and rank.
std::vector<TaskAlert> task_alerts(const TaskSnapshot& snapshot,
                                   const std::vector<std::string>& job_nodes);

// The task's node: its record's, else job_nodes[rank / tasks_per_node]; "" when neither says.
std::string task_node(const TaskRecord& task, const TaskSnapshot& snapshot,
                      const std::vector<std::string>& job_nodes);

// The heartbeat rule above, for a job Slurm shows RUNNING; now_ms is the cluster's clock.
std::optional<NodeLostMarker> silent_task(const TaskSnapshot& snapshot, std::int64_t now_ms,
                                          const std::vector<std::string>& job_nodes);

// The GPU fault rule above: the task whose fault came first, as a marker; nullopt when no task's
// newest record states one.
std::optional<NodeLostMarker> faulted_task(const TaskSnapshot& snapshot,
                                           const std::vector<std::string>& job_nodes);

// The node to blame for a job that ended in `state` (Slurm's base state word); "" for none.
std::string failed_node_after_end(const TaskSnapshot& snapshot, std::string_view state,
                                  const std::vector<std::string>& job_nodes);

}  // namespace orch::slurm
