#include "testkit/fake_kube/init_containers.h"

#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {
namespace {

// initContainerStatuses with one entry per init container (kept where they are).
json& init_statuses(json& pod) {
  const json& inits = init_containers(pod);
  json& list = pod["status"]["initContainerStatuses"];
  if (!list.is_array() || list.size() != inits.size()) {
    list = json::array();
    for (const json& c : inits) {
      list.push_back(new_container_status(c, {{"waiting", {{"reason", "PodInitializing"}}}}));
    }
  }
  return list;
}

// Initialized False naming the init containers from `index` on.
void not_initialized(json& pod, std::size_t index) {
  const json& inits = init_containers(pod);
  std::string names;
  for (std::size_t i = index; i < inits.size(); ++i) {
    names += (names.empty() ? "" : " ") + string_at(inits[i], {"name"});
  }
  set_condition(pod, "Initialized", "False", "ContainersNotInitialized",
                "containers with incomplete status: [" + names + "]");
}

}  // namespace

const json& init_containers(const json& pod) {
  static const json kNone = json::array();
  const json& inits = at_path(pod, {"spec", "initContainers"});
  return inits.is_array() ? inits : kNone;
}

void mark_init_running(json& pod, std::size_t index, const std::string& started_at,
                       const std::string& container_id) {
  json& status = pod["status"];
  status["phase"] = "Pending";
  if (!status.contains("startTime")) status["startTime"] = started_at;
  status["hostIP"] = "127.0.0.1";
  status["podIP"] = "127.0.0.1";
  json& cs = init_statuses(pod)[index];
  cs["state"] = {{"running", {{"startedAt", started_at}}}};
  cs["started"] = true;
  cs["containerID"] = container_id;
  cs["imageID"] = "fake.local/" + string_at(cs, {"image"}) + "@sha256:" + std::string(64, '0');
  const json& containers = at_path(pod, {"spec", "containers"});
  const std::string main =
      containers.is_array() && !containers.empty() ? string_at(containers[0], {"name"}) : "main";
  set_condition(pod, "PodReadyToStartContainers", "True");
  not_initialized(pod, index);
  set_condition(pod, "Ready", "False", "ContainersNotReady",
                "containers with unready status: [" + main + "]");
  set_condition(pod, "ContainersReady", "False", "ContainersNotReady",
                "containers with unready status: [" + main + "]");
  set_condition(pod, "PodScheduled", "True");
  set_container_waiting(pod, "PodInitializing", "");
}

void mark_init_finished(json& pod, std::size_t index, const Termination& t) {
  json& cs = init_statuses(pod)[index];
  set_terminated_state(cs, t);
  cs["ready"] = t.exit_code == 0;
  if (t.exit_code == 0) return;
  pod["status"]["phase"] = "Failed";
  not_initialized(pod, index);
  set_condition(pod, "Ready", "False", "PodFailed");
  set_condition(pod, "ContainersReady", "False", "PodFailed");
  set_condition(pod, "PodReadyToStartContainers", "False");
}

}  // namespace orch::fake_kube
