#pragma once
// The simulated cluster behind the fake API server: the object store, the nodes it starts with,
// and one control loop thread that plays the job controller, the garbage collector, the
// scheduler and the kubelets (every `tick`, and at once after a change made through the API).
// API routes and test hooks call in under the same lock as the loop.

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/job_controller.h"
#include "testkit/fake_kube/kubelet.h"
#include "testkit/fake_kube/kueue.h"
#include "testkit/fake_kube/object_store.h"

namespace orch::fake_kube {

// The node label that carries NodeConfig::cpu_share to the kubelet.
inline constexpr const char* kCpuShareLabel = "fake.orchestrate.dev/cpu-share";

struct NodeConfig {
  std::string name;
  int gpus = 8;
  std::string product = "NVIDIA-H100-80GB-HBM3";
  bool ready = true;
  bool unschedulable = false;
  nlohmann::json labels = nlohmann::json::object();  // extra labels
  nlohmann::json taints = nlohmann::json::array();   // extra taints
  // The share of the CPU its pods' processes get (cpu_throttle.h): below 1, a slow node that a
  // burn-in probe finds.
  double cpu_share = 1.0;
};

// Reads [{"name":"n0","gpus":8,"product":"...","ready":true,"unschedulable":false,
// "labels":{...},"taints":[...]}, ...]; throws std::runtime_error naming the bad entry.
std::vector<NodeConfig> parse_node_configs(const nlohmann::json& list);
// "NAME:GPUS[:PRODUCT]" ("n0:8:NVIDIA-A100-SXM4-80GB").
NodeConfig parse_node_flag(const std::string& text);
// Nodes "node-0".."node-(count-1)" with `gpus` GPUs each.
std::vector<NodeConfig> uniform_nodes(int count, int gpus);

#ifdef ORCH_FAKE_KUBE_AGENT
inline constexpr const char* kDefaultAgentBinary = ORCH_FAKE_KUBE_AGENT;
#else
inline constexpr const char* kDefaultAgentBinary = "";
#endif

struct ClusterOptions {
  std::string state_dir;  // pod directories and logs go under state_dir/pods
  std::vector<NodeConfig> nodes = uniform_nodes(2, 8);
  std::vector<std::string> namespaces = {"default"};  // kube-system is always there
  std::chrono::milliseconds tick{50};
  std::size_t history_limit = 5000;  // watch events kept for resourceVersion resumption
  // The image map (there are no images: every container runs on this machine). An image name,
  // with or without its ":tag", -> a directory that stands for the image's root filesystem (an
  // absolute command P runs <dir>/P) or one executable file (the command whose last component
  // is that file's name, or a container without a command, runs it). Images not in the map run
  // their command as found on this machine.
  std::map<std::string, std::string> image_map;
  // What an image whose name contains "orchestrate-agent" and is not in image_map runs: the
  // local build of the agent (its path comes from CMake), so that the agent image's init
  // container (kubernetes.agent_image) installs the agent of this build.
  std::string agent_binary = kDefaultAgentBinary;
};

class Cluster {
 public:
  explicit Cluster(ClusterOptions options);
  ~Cluster();  // stop()
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Creates the namespaces and nodes and starts the control loop.
  void start(int api_port);
  // Stops the loop and kills (and reaps) every pod process. Safe to call twice.
  void stop();

  ObjectStore& store() { return store_; }
  // Runs fn under the cluster lock, then wakes the control loop.
  template <typename Fn>
  auto locked(Fn&& fn) {
    struct Kick {
      Cluster* c;
      ~Kick() { c->kick(); }
    } kick{this};
    std::lock_guard lock(mu_);
    return fn();
  }
  Kubelet& kubelet() { return kubelet_; }  // under locked()
  void kick();

  // Test hooks (they lock). Each returns "" or why it could not.
  // lost=true: the node dies (Ready Unknown, unreachable taints, its pods' processes killed,
  // pods Failed with reason NodeLost). lost=false: the kubelet reports NotReady (Ready False,
  // not-ready taints; pods keep running).
  std::string set_node_not_ready(const std::string& node, bool lost);
  std::string set_node_ready(const std::string& node);
  // The node dies silently (Kubelet::freeze): its pods' processes killed, the API unchanged
  // (pods Running, node Ready). set_node_ready brings its kubelet back.
  std::string freeze_node(const std::string& node);
  std::string add_node(const NodeConfig& node);
  // Kueue (kueue.h): a LocalQueue with a GPU quota that admits suspended Jobs naming it.
  FakeKueue& kueue() { return kueue_; }
  // Turns the garbage collector off (a cluster whose controller manager runs without it):
  // nothing is deleted for its owner's sake, not even a Background deletion's pods.
  void set_garbage_collection(bool on) {
    locked([&] { garbage_collection_ = on; });
  }

  static nlohmann::json node_object(const NodeConfig& node);

 private:
  void loop();
  void tick();  // mu_ held
  void schedule();

  ClusterOptions options_;
  ObjectStore store_;
  Kubelet kubelet_;
  JobController jobs_;
  FakeKueue kueue_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool kicked_ = false;
  bool stopping_ = false;
  bool started_ = false;
  bool garbage_collection_ = true;
  std::thread thread_;
};

}  // namespace orch::fake_kube
