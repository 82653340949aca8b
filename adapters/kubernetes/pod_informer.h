#pragma once
// PodInformer: a cache of the pods orchestrate manages on one cluster, kept current the way
// Kubernetes' own controllers do it: list (with a label selector), then watch from the list's
// resourceVersion; when the watch ends, watch again from the last resourceVersion seen; when
// the server answers 410 Gone (the version is too old), list again. A relist replaces the whole
// cache, so no change is ever lost, only seen later.
//
// The cache is trusted only while it is fresh: synced by a list and with a watch running (or
// just ended). Otherwise pods() answers nullopt and the caller asks the API server directly.
// Runs on its own thread; every call is bounded.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/kube_status.h"

namespace orch::kube {

class PodInformer {
 public:
  // `pods_path`: /api/v1/namespaces/<ns>/pods; `selector`: a label selector (URL-encoded).
  PodInformer(KubeClient& client, std::string pods_path, std::string selector);
  ~PodInformer();
  PodInformer(const PodInformer&) = delete;
  PodInformer& operator=(const PodInformer&) = delete;

  void start();
  void stop();

  // The cached pods carrying this launch token, or nullopt when the cache cannot be trusted now.
  std::optional<std::vector<PodInfo>> pods(const std::string& token) const;

  // For tests and /metrics: how many lists (the first, and relists after 410 or errors) and
  // watch events the informer has taken in.
  std::uint64_t lists() const { return lists_; }
  std::uint64_t events() const { return events_; }

 private:
  void run();
  bool relist();             // false: the list failed (the cache is marked stale)
  void watch_until_ended();  // returns when the watch ended, failed, or 410 asks for a relist
  void apply(const WatchEvent& event);

  KubeClient& client_;
  std::string pods_path_;
  std::string selector_;

  mutable std::mutex mu_;
  std::map<std::string, PodInfo> pods_;  // by pod name
  std::string resource_version_;
  bool synced_ = false;  // a list succeeded and the watch since has not failed
  bool need_relist_ = true;

  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> lists_{0};
  std::atomic<std::uint64_t> events_{0};
  std::thread thread_;
};

}  // namespace orch::kube
