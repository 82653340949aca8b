#include "testkit/fake_kube/pod_status.h"

#include <sys/wait.h>

#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {
namespace {

json& first_container_status(json& pod) {
  json& status = pod["status"];
  json& list = status["containerStatuses"];
  const json& containers = at_path(pod, {"spec", "containers"});
  if (!list.is_array() || list.empty()) {
    list = json::array();
    const json c = containers.is_array() && !containers.empty() ? containers[0] : json::object();
    list.push_back(new_container_status(c, json::object()));
  }
  return list[0];
}

}  // namespace

json new_container_status(const json& container, const json& state) {
  return {{"name", string_at(container, {"name"}, "main")},
          {"image", string_at(container, {"image"})},
          {"imageID", ""},
          {"lastState", json::object()},
          {"ready", false},
          {"restartCount", 0},
          {"started", false},
          {"state", state}};
}

void set_condition(json& object, const std::string& type, const std::string& status,
                   const std::string& reason, const std::string& message) {
  json& conditions = object["status"]["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  json next = {{"type", type},
               {"status", status},
               {"lastProbeTime", nullptr},
               {"lastTransitionTime", now_rfc3339()}};
  if (!reason.empty()) next["reason"] = reason;
  if (!message.empty()) next["message"] = message;
  for (json& c : conditions) {
    if (string_at(c, {"type"}) != type) continue;
    if (string_at(c, {"status"}) == status) next["lastTransitionTime"] = c["lastTransitionTime"];
    c = next;
    return;
  }
  conditions.push_back(next);
}

std::string condition_status(const json& object, const std::string& type) {
  const json& conditions = at_path(object, {"status", "conditions"});
  if (!conditions.is_array()) return "";
  for (const json& c : conditions) {
    if (string_at(c, {"type"}) == type) return string_at(c, {"status"});
  }
  return "";
}

void set_container_waiting(json& pod, const std::string& reason, const std::string& message) {
  json& cs = first_container_status(pod);
  json waiting = {{"reason", reason}};
  if (!message.empty()) waiting["message"] = message;
  cs["state"] = {{"waiting", waiting}};
  cs["ready"] = false;
  cs["started"] = false;
}

void set_container_running(json& pod, const std::string& started_at,
                           const std::string& container_id) {
  json& cs = first_container_status(pod);
  cs["state"] = {{"running", {{"startedAt", started_at}}}};
  cs["ready"] = true;
  cs["started"] = true;
  cs["containerID"] = container_id;
  cs["imageID"] = "fake.local/" + string_at(cs, {"image"}) + "@sha256:" + std::string(64, '0');
}

void set_terminated_state(json& cs, const Termination& t) {
  json term = {{"exitCode", t.exit_code}, {"reason", t.reason}, {"finishedAt", t.finished_at}};
  if (!t.message.empty()) term["message"] = t.message;
  if (!t.started_at.empty()) term["startedAt"] = t.started_at;
  if (!t.container_id.empty()) {
    term["containerID"] = t.container_id;
    cs["containerID"] = t.container_id;
  }
  cs["state"] = {{"terminated", term}};
  cs["ready"] = false;
  cs["started"] = false;
}

void set_container_terminated(json& pod, const Termination& t) {
  set_terminated_state(first_container_status(pod), t);
}

void mark_running(json& pod, const std::string& started_at, const std::string& container_id) {
  json& status = pod["status"];
  status["phase"] = "Running";
  status["hostIP"] = "127.0.0.1";
  status["hostIPs"] = json::array({{{"ip", "127.0.0.1"}}});
  status["podIP"] = "127.0.0.1";
  status["podIPs"] = json::array({{{"ip", "127.0.0.1"}}});
  for (const char* type :
       {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    set_condition(pod, type, "True");
  }
  set_container_running(pod, started_at, container_id);
}

void mark_finished(json& pod, const Termination& t) {
  const bool ok = t.exit_code == 0;
  pod["status"]["phase"] = ok ? "Succeeded" : "Failed";
  const char* reason = ok ? "PodCompleted" : "PodFailed";
  set_condition(pod, "Ready", "False", reason);
  set_condition(pod, "ContainersReady", "False", reason);
  set_condition(pod, "PodReadyToStartContainers", "False");
  set_container_terminated(pod, t);
}

Termination termination_of(int wait_status, const std::string& forced_reason) {
  Termination t;
  if (WIFSIGNALED(wait_status)) {
    t.signal = WTERMSIG(wait_status);
    t.exit_code = 128 + t.signal;
  } else if (WIFEXITED(wait_status)) {
    t.exit_code = WEXITSTATUS(wait_status);
  }
  t.reason = !forced_reason.empty() ? forced_reason : t.exit_code == 0 ? "Completed" : "Error";
  t.finished_at = now_rfc3339();
  return t;
}

bool pod_terminal(const json& pod) {
  const std::string phase = string_at(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace orch::fake_kube
