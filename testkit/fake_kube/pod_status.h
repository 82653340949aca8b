#pragma once
// Pure JSON edits of a Pod's status, in the shapes the kubelet writes: phase, conditions (with
// lastTransitionTime kept while the status does not change) and containerStatuses[].state
// waiting / running / terminated.

#include <string>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

using nlohmann::json;

// Sets (or adds) the condition of that type; lastTransitionTime changes only with the status.
void set_condition(json& object, const std::string& type, const std::string& status,
                   const std::string& reason = "", const std::string& message = "");
std::string condition_status(const json& object, const std::string& type);  // "" when absent

// A container's status entry before it ran (not ready, not started, no restarts) in `state`.
json new_container_status(const json& container, const json& state);

// The first container's status (the fake runs one container per pod).
void set_container_waiting(json& pod, const std::string& reason, const std::string& message);
void set_container_running(json& pod, const std::string& started_at,
                           const std::string& container_id);
struct Termination {
  int exit_code = 0;
  int signal = 0;      // when a signal ended it (exit_code is then 128 + signal)
  std::string reason;  // Completed, Error, OOMKilled, StartError
  std::string message;
  std::string started_at;
  std::string finished_at;
  std::string container_id;
};
void set_container_terminated(json& pod, const Termination& t);
// One container status entry (a containerStatuses or initContainerStatuses item) terminated.
void set_terminated_state(json& container_status, const Termination& t);

// Phase Running with every condition True (PodReadyToStartContainers, Initialized, Ready,
// ContainersReady, PodScheduled) and the pod's IPs on 127.0.0.1.
void mark_running(json& pod, const std::string& started_at, const std::string& container_id);
// Phase Succeeded (exit 0) or Failed with the termination; Ready and ContainersReady False.
void mark_finished(json& pod, const Termination& t);

// Termination of a wait status: exit code, or 128 + signal; reason Completed or Error unless
// `forced_reason` (OOMKilled) is given.
Termination termination_of(int wait_status, const std::string& forced_reason);

bool pod_terminal(const json& pod);  // phase Succeeded or Failed

}  // namespace orch::fake_kube
