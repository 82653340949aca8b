#include "scheduler/model/gang_verdict.h"

#include <csignal>

namespace orch {
namespace {

bool vanished(const TaskView& t) {
  return !t.alive && !t.exited && t.started;
}

bool silent(const TaskView& t, std::int64_t now_ms, std::int64_t timeout_ms) {
  return timeout_ms > 0 && t.alive && t.last_record_ms && now_ms - *t.last_record_ms >= timeout_ms;
}

bool failed(const TaskView& t) {
  return t.exited && (t.signal || t.exit_code.value_or(0) != 0);
}

std::string task_words(const TaskView& t) {
  return "task " + std::to_string(t.rank) + (t.node.empty() ? "" : " on " + t.node);
}

// Rule 1: the longest silent task, then the lowest rank; nullptr when no node is lost.
const TaskView* lost_task(const std::vector<TaskView>& tasks, std::int64_t now_ms,
                          std::int64_t timeout_ms) {
  bool any_not_vanished = false;
  for (const TaskView& t : tasks) any_not_vanished = any_not_vanished || !vanished(t);
  const TaskView* lost = nullptr;
  for (const TaskView& t : tasks) {
    const bool is_lost = (vanished(t) && any_not_vanished) || silent(t, now_ms, timeout_ms);
    if (!is_lost) continue;
    // A vanished task's last record is as good a time of death as we have.
    if (lost == nullptr || t.last_record_ms.value_or(0) < lost->last_record_ms.value_or(0)) {
      lost = &t;
    }
  }
  return lost;
}

GangVerdict node_lost(const TaskView& t, std::int64_t now_ms) {
  ExitStatus s;
  s.node_lost = true;
  s.cause = ExitCause::node_lost;
  s.failed_node = t.node;
  s.failed_rank = t.rank;
  s.last_heard_ms = t.last_record_ms;
  if (vanished(t)) {
    s.signal = SIGKILL;
    s.detail = task_words(t) +
               ": its agent vanished without an exit record while the rest of "
               "the gang ran on";
  } else {
    const std::int64_t quiet_s = (now_ms - t.last_record_ms.value_or(now_ms)) / 1000;
    s.detail = "no heartbeat from " + task_words(t) + " for " + std::to_string(quiet_s) + " s";
  }
  return {RunPhase::exited, s, t.rank};
}

// Rule 0: the earliest fault, then the lowest rank; nullptr when none, or every task exited 0.
const TaskView* faulted_task(const std::vector<TaskView>& tasks) {
  const TaskView* first = nullptr;
  bool all_succeeded = !tasks.empty();
  for (const TaskView& t : tasks) {
    all_succeeded = all_succeeded && t.exited && !failed(t);
    if (t.fault && (first == nullptr || t.fault->at_ms < first->fault->at_ms)) first = &t;
  }
  return all_succeeded ? nullptr : first;
}

}  // namespace

GangVerdict judge_gang(const std::vector<TaskView>& tasks, std::int64_t now_ms,
                       std::int64_t heartbeat_timeout_ms) {
  if (const TaskView* faulted = faulted_task(tasks)) {
    return {RunPhase::exited, fault_exit_status(*faulted->fault, faulted->node, faulted->rank),
            faulted->rank};
  }
  if (const TaskView* lost = lost_task(tasks, now_ms, heartbeat_timeout_ms)) {
    return node_lost(*lost, now_ms);
  }
  const TaskView* first = nullptr;
  bool all_done = true, all_vanished = !tasks.empty();
  for (const TaskView& t : tasks) {
    all_done = all_done && t.exited;
    all_vanished = all_vanished && vanished(t);
    if (failed(t) &&
        (first == nullptr || t.exit_at_ms.value_or(0) < first->exit_at_ms.value_or(0))) {
      first = &t;
    }
  }
  if (first != nullptr) {
    ExitStatus s;
    s.exit_code = first->signal ? std::nullopt : first->exit_code;
    s.signal = first->signal;
    s.failed_node = first->node;
    s.failed_rank = first->rank;
    if (tasks.size() > 1) s.detail = task_words(*first) + " failed first";
    if (s.signal) {
      s.detail += (s.detail.empty() ? "" : "; ") + std::string("killed by signal ") +
                  std::to_string(*s.signal);
    }
    return {RunPhase::exited, s, first->rank};
  }
  if (all_vanished) {
    ExitStatus s;
    s.signal = SIGKILL;
    s.detail = "agent vanished without an exit record";
    return {RunPhase::exited, s, -1};
  }
  if (all_done && !tasks.empty()) {
    ExitStatus s;
    s.exit_code = 0;
    return {RunPhase::exited, s, -1};
  }
  return {};
}

}  // namespace orch
