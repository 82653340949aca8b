#pragma once
// The fake's kubelets (one for all nodes): pods bound to a node run as local processes.
// sync() is one pass over the pods: run their init containers one by one to completion
// (init_containers.h; a failing one fails the pod), then start the ones bound to a live node
// (or hold them in ErrImagePull/ImagePullBackOff for image "fake/pull-error",
// CreateContainerConfigError for "fake/config-error", a mount path in the way, or a
// secretKeyRef whose Secret or key does not exist yet: tried again on every pass), notice exits (phase Succeeded/Failed, container terminated
// with Completed/Error/OOMKilled), enforce activeDeadlineSeconds, and carry out graceful deletion
// (SIGTERM to the process group, SIGKILL after the grace period, then the object goes).
// Pods on a node whose Ready condition is Unknown are not touched: that kubelet is gone.
//
// Not thread-safe: the Cluster calls it under its lock.

#include <sys/types.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/cpu_throttle.h"
#include "testkit/fake_kube/image_map.h"
#include "testkit/fake_kube/object_store.h"

namespace orch::fake_kube {

class Kubelet {
 public:
  Kubelet(ObjectStore& store, std::string state_dir) : store_(store), state_dir_(state_dir) {}
  void set_api_port(int port) { api_port_ = port; }
  void set_images(ImageMap images) { images_ = std::move(images); }
  const ImageMap& images() const { return images_; }
  int api_port() const { return api_port_; }

  void sync();

  // Test hooks. Each returns "" or why it could not.
  // Signals the pod's process group; `reason` (e.g. "OOMKilled") becomes the container's
  // terminated reason.
  std::string kill(const json& pod, int sig, const std::string& reason);
  // Kubelet eviction: the process is killed, the pod ends Failed with reason Evicted.
  std::string evict(const json& pod, const std::string& message);
  // The node died: its pods' processes are killed at once and the pods marked Failed
  // (reason NodeLost, condition DisruptionTarget).
  void node_lost(const std::string& node);
  // The node dies without a word (a kernel panic, a power cut) in the 40 s before Kubernetes'
  // node controller notices: its pods' processes are SIGKILLed, the pods stay Running in the API
  // and the node Ready, and nothing of the node is touched again (no start, no exit noticed;
  // exec refused; a deleted pod goes at once) until thaw().
  void freeze(const std::string& node);
  void thaw(const std::string& node) { frozen_.erase(node); }
  bool frozen(const std::string& node) const { return frozen_.count(node) > 0; }
  // {"pid":N,"running":bool,"dir":...,"log":...} for a pod.
  json describe(const json& pod) const;

  // Kills every process and reaps it (server shutdown).
  void stop_all();

  std::string pod_dir(const json& pod) const;
  std::string log_path(const json& pod) const;

 private:
  struct Runtime {
    pid_t pid = 0;
    std::string started_at;
    std::string container_id;
    std::string forced_reason;  // container terminated reason (OOMKilled)
    std::string pod_reason;     // pod status.reason (Evicted, DeadlineExceeded)
    std::string pod_message;
    bool term_sent = false;
    std::chrono::steady_clock::time_point kill_at;
    std::chrono::steady_clock::time_point waiting_since;
    std::size_t inits_done = 0;  // init containers that completed
    bool in_init = false;        // pid is init container `inits_done`
  };
  void start(const json& pod);
  void observe(const json& pod, Runtime& rt);
  void terminate(const json& pod, bool node_gone);
  void finish(const json& pod, Runtime& rt, int wait_status);
  void finish_init(const json& pod, Runtime& rt, int wait_status);
  void start_failed(const json& pod, const std::string& why, bool init);
  static void reap(pid_t pid);

  ObjectStore& store_;
  std::string state_dir_;
  int api_port_ = 0;
  ImageMap images_;
  CpuThrottle throttle_;                     // the pods of slow nodes
  std::map<std::string, Runtime> runtimes_;  // by pod uid
  std::set<std::string> frozen_;             // nodes frozen by freeze()
};

}  // namespace orch::fake_kube
