#include "testkit/fake_kube/kubelet.h"

#include "testkit/fake_kube/cluster.h"
#include "testkit/fake_kube/pod_volumes.h"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <filesystem>
#include <set>

#include "testkit/fake_kube/container_spec.h"
#include "testkit/fake_kube/init_containers.h"
#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/pod_process.h"
#include "testkit/fake_kube/pod_status.h"

namespace orch::fake_kube {
namespace {

using Clock = std::chrono::steady_clock;

std::string ns_of(const json& o) {
  return string_at(o, {"metadata", "namespace"});
}
std::string name_of(const json& o) {
  return string_at(o, {"metadata", "name"});
}
std::string uid_of(const json& o) {
  return string_at(o, {"metadata", "uid"});
}

std::string first_container_name(const json& pod) {
  const json& containers = at_path(pod, {"spec", "containers"});
  if (containers.is_array() && !containers.empty()) {
    return string_at(containers[0], {"name"}, "main");
  }
  return "main";
}

bool image_is(const json& pod, const std::string& fake) {
  const json& containers = at_path(pod, {"spec", "containers"});
  if (!containers.is_array() || containers.empty()) return false;
  const std::string image = string_at(containers[0], {"image"});
  return image == fake || image.rfind(fake + ":", 0) == 0;
}

std::string image_of(const json& pod) {
  const json& containers = at_path(pod, {"spec", "containers"});
  return containers.is_array() && !containers.empty() ? string_at(containers[0], {"image"}) : "";
}

void not_ready_conditions(json& pod, const std::string& container) {
  const std::string message = "containers with unready status: [" + container + "]";
  set_condition(pod, "PodReadyToStartContainers", "True");
  set_condition(pod, "Initialized", "True");
  set_condition(pod, "Ready", "False", "ContainersNotReady", message);
  set_condition(pod, "ContainersReady", "False", "ContainersNotReady", message);
  set_condition(pod, "PodScheduled", "True");
}

// The pod stays Pending, its container waiting in CreateContainerConfigError with `message`;
// start() tries again on every pass, as the kubelet does.
void hold_waiting(ObjectStore& store, const json& pod, const std::string& container,
                  const std::string& message) {
  store.update("pods", ns_of(pod), name_of(pod), [&](json& p) {
    p["status"]["phase"] = "Pending";
    if (!p["status"].contains("startTime")) p["status"]["startTime"] = now_rfc3339();
    not_ready_conditions(p, container);
    set_container_waiting(p, "CreateContainerConfigError", message);
  });
}

}  // namespace

std::string Kubelet::pod_dir(const json& pod) const {
  return state_dir_ + "/pods/" + ns_of(pod) + "_" + name_of(pod) + "_" + uid_of(pod).substr(0, 8);
}

std::string Kubelet::log_path(const json& pod) const {
  return pod_dir(pod) + "/" + first_container_name(pod) + ".log";
}

void Kubelet::reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

void Kubelet::sync() {
  std::map<std::string, json> nodes;
  for (json& n : store_.all("nodes")) {
    const std::string name = name_of(n);  // before n is moved from
    nodes[name] = std::move(n);
  }
  std::set<std::string> seen;
  for (const json& pod : store_.all("pods")) {
    const std::string uid = uid_of(pod);
    seen.insert(uid);
    const std::string node_name = string_at(pod, {"spec", "nodeName"});
    if (node_name.empty()) continue;  // the scheduler's, or removed at once when deleted
    const auto node = nodes.find(node_name);
    const bool node_gone = node == nodes.end() ||
                           condition_status(node->second, "Ready") == "Unknown" ||
                           frozen_.count(node_name) > 0;
    if (!at_path(pod, {"metadata", "deletionTimestamp"}).is_null()) {
      terminate(pod, node_gone);
      continue;
    }
    if (node_gone || pod_terminal(pod)) continue;
    auto rt = runtimes_.find(uid);
    if (rt == runtimes_.end() || rt->second.pid == 0) {
      start(pod);
    } else {
      observe(pod, rt->second);
    }
  }
  // Processes whose pod is gone (deleted with grace period 0): kill, reap, forget.
  for (auto it = runtimes_.begin(); it != runtimes_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.pid > 0) {
      signal_group(it->second.pid, SIGKILL);
      reap(it->second.pid);
    }
    it = runtimes_.erase(it);
  }
}

void Kubelet::start(const json& pod) {
  const std::string ns = ns_of(pod);
  const std::string name = name_of(pod);
  Runtime& rt = runtimes_[uid_of(pod)];
  const std::string container = first_container_name(pod);
  if (image_is(pod, "fake/pull-error")) {
    const auto now = Clock::now();
    if (rt.waiting_since == Clock::time_point{}) rt.waiting_since = now;
    const bool backoff = now - rt.waiting_since >= std::chrono::seconds(1);
    const std::string image = image_of(pod);
    store_.update("pods", ns, name, [&](json& p) {
      p["status"]["phase"] = "Pending";
      if (!p["status"].contains("startTime")) p["status"]["startTime"] = now_rfc3339();
      not_ready_conditions(p, container);
      if (backoff) {
        set_container_waiting(p, "ImagePullBackOff", "Back-off pulling image \"" + image + "\"");
      } else {
        set_container_waiting(p, "ErrImagePull",
                              "rpc error: code = NotFound desc = failed to pull and unpack image "
                              "\"docker.io/" +
                                  image +
                                  "\": failed to resolve reference "
                                  "\"docker.io/" +
                                  image + "\": docker.io/" + image + ": not found");
      }
    });
    return;
  }
  if (image_is(pod, "fake/config-error")) {
    return hold_waiting(store_, pod, container, "configmap \"fake-config\" not found");
  }

  const std::string dir = pod_dir(pod);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (const std::string why = mount_volumes(pod, dir, state_dir_); !why.empty()) {
    return hold_waiting(store_, pod, container, why);
  }
  // The init containers first, one by one (init_containers.h), then the first container.
  const json& inits = init_containers(pod);
  const bool init = rt.inits_done < inits.size();
  const json spec = init ? inits[rt.inits_done] : first_container(pod);
  const std::string log =
      init ? dir + "/" + string_at(spec, {"name"}, "init") + ".log" : log_path(pod);
  ContainerLaunch launch = container_launch(
      pod, spec, dir, log, api_port_,
      [&](const std::string& secret) { return store_.get("secrets", ns, secret); }, &images_);
  if (!launch.config_error.empty()) {  // a missing Secret or key: tried again next pass
    return hold_waiting(store_, pod, container, launch.config_error);
  }
  double cpu_share = 1.0;
  if (auto node = store_.get("nodes", "", string_at(pod, {"spec", "nodeName"}))) {
    cpu_share = std::atof(string_at(*node, {"metadata", "labels", kCpuShareLabel}, "1").c_str());
  }
  SpawnResult spawned;
  if (launch.error.empty()) {
    spawned = spawn_process(launch.process);
    if (spawned.pid <= 0) launch.error = "failed to start the container process: " + spawned.error;
  }
  if (!launch.error.empty()) return start_failed(pod, launch.error, init);
  const std::string now = now_rfc3339();
  rt.container_id = "containerd://" + random_hex(64);
  rt.pid = spawned.pid;
  rt.in_init = init;
  if (cpu_share > 0 && cpu_share < 1) throttle_.add(spawned.pid, cpu_share);
  rt.started_at = now;
  store_.update("pods", ns, name, [&](json& p) {
    if (!p["status"].contains("startTime")) p["status"]["startTime"] = now;
    if (init) {
      mark_init_running(p, rt.inits_done, now, rt.container_id);
    } else {
      mark_running(p, now, rt.container_id);
    }
  });
}

// A container that could not start: exit 128, StartError with the runtime's message; the pod
// fails (an init container's with it).
void Kubelet::start_failed(const json& pod, const std::string& why, bool init) {
  const std::size_t index = runtimes_[uid_of(pod)].inits_done;
  runtimes_.erase(uid_of(pod));
  const std::string now = now_rfc3339();
  Termination t;
  t.exit_code = 128;
  t.reason = "StartError";
  t.message = why;
  t.finished_at = now;
  t.started_at = "1970-01-01T00:00:00Z";
  store_.update("pods", ns_of(pod), name_of(pod), [&](json& p) {
    if (!p["status"].contains("startTime")) p["status"]["startTime"] = now;
    if (init) return mark_init_finished(p, index, t);
    mark_running(p, now, "");
    mark_finished(p, t);
  });
}

void Kubelet::observe(const json& pod, Runtime& rt) {
  if (auto status = poll_exit(rt.pid)) {
    return rt.in_init ? finish_init(pod, rt, *status) : finish(pod, rt, *status);
  }
  const long long deadline = int_at(pod, {"spec", "activeDeadlineSeconds"}, -1);
  const auto started = parse_rfc3339(string_at(pod, {"status", "startTime"}));
  if (deadline >= 0 && rt.pod_reason.empty() &&
      std::chrono::system_clock::now() - started >= std::chrono::seconds(deadline)) {
    rt.pod_reason = "DeadlineExceeded";
    rt.pod_message = "Pod was active on the node longer than the specified deadline";
    signal_group(rt.pid, SIGKILL);
  }
}

void Kubelet::finish(const json& pod, Runtime& rt, int wait_status) {
  Termination t = termination_of(wait_status, rt.forced_reason);
  t.started_at = rt.started_at;
  t.container_id = rt.container_id;
  const Runtime done = rt;
  runtimes_.erase(uid_of(pod));
  store_.update("pods", ns_of(pod), name_of(pod), [&](json& p) {
    mark_finished(p, t);
    if (!done.pod_reason.empty()) {
      p["status"]["phase"] = "Failed";
      p["status"]["reason"] = done.pod_reason;
      p["status"]["message"] = done.pod_message;
      if (done.pod_reason == "Evicted") {
        set_condition(p, "DisruptionTarget", "True", "TerminationByKubelet", done.pod_message);
      }
    }
  });
}

// An init container ended: the next one (or the first container) starts on the next pass, or
// the pod fails with it.
void Kubelet::finish_init(const json& pod, Runtime& rt, int wait_status) {
  Termination t = termination_of(wait_status, rt.forced_reason);
  t.started_at = rt.started_at;
  t.container_id = rt.container_id;
  const std::size_t index = rt.inits_done;
  if (t.exit_code == 0) {
    rt.pid = 0;
    rt.in_init = false;
    rt.forced_reason.clear();
    ++rt.inits_done;
  } else {
    runtimes_.erase(uid_of(pod));
  }
  store_.update("pods", ns_of(pod), name_of(pod),
                [&](json& p) { mark_init_finished(p, index, t); });
}

void Kubelet::terminate(const json& pod, bool node_gone) {
  const std::string ns = ns_of(pod);
  const std::string name = name_of(pod);
  auto it = runtimes_.find(uid_of(pod));
  if (it != runtimes_.end() && it->second.pid > 0) {
    Runtime& rt = it->second;
    if (node_gone) {
      signal_group(rt.pid, SIGKILL);
      reap(rt.pid);
    } else if (auto status = poll_exit(rt.pid)) {
      // finish erases rt; the object goes on the next pass
      if (rt.in_init) {
        runtimes_.erase(it);
      } else {
        finish(pod, rt, *status);
      }
      return;
    } else {
      if (!rt.term_sent) {
        const long long grace = int_at(pod, {"metadata", "deletionGracePeriodSeconds"}, 30);
        rt.term_sent = true;
        rt.kill_at = Clock::now() + std::chrono::seconds(grace);
        signal_group(rt.pid, SIGTERM);
      } else if (Clock::now() >= rt.kill_at) {
        signal_group(rt.pid, SIGKILL);
      }
      return;
    }
  }
  runtimes_.erase(uid_of(pod));
  store_.remove("pods", ns, name);
}

std::string Kubelet::kill(const json& pod, int sig, const std::string& reason) {
  auto it = runtimes_.find(uid_of(pod));
  if (it == runtimes_.end() || it->second.pid <= 0) {
    return "pod " + ns_of(pod) + "/" + name_of(pod) + " has no running process";
  }
  if (!reason.empty()) it->second.forced_reason = reason;
  signal_group(it->second.pid, sig);
  return "";
}

std::string Kubelet::evict(const json& pod, const std::string& message) {
  auto it = runtimes_.find(uid_of(pod));
  if (it != runtimes_.end() && it->second.pid > 0) {
    it->second.pod_reason = "Evicted";
    it->second.pod_message = message;
    signal_group(it->second.pid, SIGKILL);
    return "";
  }
  if (pod_terminal(pod)) return "pod " + ns_of(pod) + "/" + name_of(pod) + " has already ended";
  runtimes_.erase(uid_of(pod));
  store_.update("pods", ns_of(pod), name_of(pod), [&](json& p) {
    p["status"]["phase"] = "Failed";
    p["status"]["reason"] = "Evicted";
    p["status"]["message"] = message;
    set_condition(p, "DisruptionTarget", "True", "TerminationByKubelet", message);
  });
  return "";
}

void Kubelet::node_lost(const std::string& node) {
  for (const json& pod : store_.all("pods")) {
    if (string_at(pod, {"spec", "nodeName"}) != node || pod_terminal(pod)) continue;
    auto it = runtimes_.find(uid_of(pod));
    if (it != runtimes_.end()) {
      if (it->second.pid > 0) {
        signal_group(it->second.pid, SIGKILL);
        reap(it->second.pid);
      }
      runtimes_.erase(it);
    }
    const std::string message =
        "Node " + node + " which was running pod " + name_of(pod) + " is unresponsive";
    store_.update("pods", ns_of(pod), name_of(pod), [&](json& p) {
      p["status"]["phase"] = "Failed";
      p["status"]["reason"] = "NodeLost";
      p["status"]["message"] = message;
      set_condition(p, "Ready", "False");
      set_condition(p, "DisruptionTarget", "True", "DeletionByTaintManager",
                    "Taint manager: deleting due to NoExecute taint");
    });
  }
}

void Kubelet::freeze(const std::string& node) {
  frozen_.insert(node);
  for (const json& pod : store_.all("pods")) {
    if (string_at(pod, {"spec", "nodeName"}) != node) continue;
    auto it = runtimes_.find(uid_of(pod));
    if (it == runtimes_.end()) continue;
    if (it->second.pid > 0) {
      signal_group(it->second.pid, SIGKILL);
      reap(it->second.pid);
    }
    runtimes_.erase(it);
  }
}

json Kubelet::describe(const json& pod) const {
  auto it = runtimes_.find(uid_of(pod));
  const pid_t pid = it == runtimes_.end() ? 0 : it->second.pid;
  return {{"pid", pid},
          {"running", pid > 0},
          {"dir", pod_dir(pod)},
          {"log", log_path(pod)},
          {"node", string_at(pod, {"spec", "nodeName"})}};
}

void Kubelet::stop_all() {
  throttle_.stop();
  for (auto& [uid, rt] : runtimes_) {
    if (rt.pid > 0) signal_group(rt.pid, SIGKILL);
  }
  for (auto& [uid, rt] : runtimes_) {
    if (rt.pid > 0) reap(rt.pid);
  }
  runtimes_.clear();
}

}  // namespace orch::fake_kube
