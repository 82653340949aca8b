#pragma once
// Builders for test setups: make_job().gpus(2).on({"alpha"}), make_cluster("beta").nodes(2).
// Defaults are small and valid, so a test only states what it is about.

#include <string>
#include <vector>

#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/job_spec.h"

namespace orch::testing {

class JobBuilder {
 public:
  JobBuilder() {
    spec_.name = "toy";
    spec_.command = "toy_trainer --steps 100";
    spec_.gpus_per_node = 1;
    spec_.checkpoint.dir = "/ckpt/toy";
    spec_.model.flops_per_token = 6.0e6;
    spec_.restart.backoff.initial_s = 1;
    spec_.restart.backoff.max_s = 8;
  }
  JobBuilder& name(std::string n) {
    spec_.name = std::move(n);
    return *this;
  }
  JobBuilder& command(std::string c) {
    spec_.command = std::move(c);
    return *this;
  }
  JobBuilder& nodes(int n) {
    spec_.nodes = n;
    return *this;
  }
  JobBuilder& spares(int n) {
    spec_.spares = n;
    return *this;
  }
  JobBuilder& gpus(int per_node) {
    spec_.gpus_per_node = per_node;
    return *this;
  }
  JobBuilder& on(std::vector<std::string> allowed) {
    spec_.allowed_clusters = std::move(allowed);
    return *this;
  }
  JobBuilder& prefer(std::vector<std::string> p) {
    spec_.preferred_clusters = std::move(p);
    return *this;
  }
  JobBuilder& flops_per_token(double f) {
    spec_.model.flops_per_token = f;
    return *this;
  }
  JobBuilder& infra_restarts(int n) {
    spec_.restart.max_infra_restarts = n;
    return *this;
  }
  JobBuilder& user_restarts(int n) {
    spec_.restart.max_user_restarts = n;
    return *this;
  }
  JobBuilder& backoff(double initial_s, double max_s = 600, double mult = 2) {
    spec_.restart.backoff = {initial_s, max_s, mult};
    return *this;
  }
  JobBuilder& resume_env(std::string e) {
    spec_.checkpoint.resume_env = std::move(e);
    return *this;
  }
  JobBuilder& hang_after_s(double s) {
    spec_.health.hang_after_s = s;
    return *this;
  }
  JobBuilder& datasets(std::vector<std::string> names) {
    spec_.datasets = std::move(names);
    return *this;
  }
  // Checkpoint policy: keep the newest `keep`, hold the newest at `copies` sites, `to` first.
  JobBuilder& replicate(int keep, int copies, std::string to = "") {
    spec_.checkpoint.replicate.keep = keep;
    spec_.checkpoint.replicate.copies = copies;
    spec_.checkpoint.replicate.to = std::move(to);
    return *this;
  }
  JobBuilder& mfu_drop_percent(double p) {
    spec_.health.mfu_drop_percent = p;
    return *this;
  }
  JobBuilder& exclude_stragglers(bool on) {
    spec_.health.exclude_stragglers = on;
    return *this;
  }
  JobBuilder& max_queue_s(double s) {
    spec_.max_queue_s = s;
    return *this;
  }
  JobBuilder& priority(int p) {
    spec_.priority = p;
    return *this;
  }
  JobBuilder& priority_class(std::string name) {
    spec_.priority_class = std::move(name);
    return *this;
  }
  // How it makes room for a job of higher priority: its grace to save, and whether it may be
  // preempted at all.
  JobBuilder& preempt_grace_s(double s) {
    spec_.preemption.grace_s = s;
    return *this;
  }
  // Backfill: the most an attempt may run, from its placement.
  JobBuilder& time_limit_s(double s) {
    spec_.time_limit_s = s;
    return *this;
  }
  JobBuilder& team(std::string t) {
    spec_.team = std::move(t);
    return *this;
  }
  JobBuilder& preemptible(bool on) {
    spec_.preemption.allowed = on;
    return *this;
  }
  JobSpec build() const { return spec_; }
  operator JobSpec() const { return spec_; }  // NOLINT(google-explicit-constructor)

 private:
  JobSpec spec_;
};

class ClusterBuilder {
 public:
  explicit ClusterBuilder(std::string name) {
    spec_.name = std::move(name);
    spec_.nodes = 2;
    spec_.gpus_per_node = 4;
    spec_.accelerator = "h100";
    spec_.unreachable_grace_s = 30;
    spec_.poll_interval_ms = 50;
  }
  ClusterBuilder& nodes(int n) {
    spec_.nodes = n;
    return *this;
  }
  ClusterBuilder& gpus_per_node(int g) {
    spec_.gpus_per_node = g;
    return *this;
  }
  ClusterBuilder& grace_s(double s) {
    spec_.unreachable_grace_s = s;
    return *this;
  }
  ClusterBuilder& accelerator(std::string a) {
    spec_.accelerator = std::move(a);
    return *this;
  }
  ClusterBuilder& peak_tflops(double t) {
    spec_.peak_tflops = t;
    return *this;
  }
  // Ordered with a promised delivery date (ms): it starts pending-delivery.
  ClusterBuilder& promised(std::int64_t at_ms, std::string as_written = "2023-11-14") {
    spec_.delivery.promised = std::move(as_written);
    spec_.delivery.promised_ms = at_ms;
    return *this;
  }
  ClusterBuilder& burn_in_on_join(bool on = true) {
    spec_.burn_in.on_join = on;
    return *this;
  }
  ClusterBuilder& quarantine(int failures, double window_h, double cooldown_h = 1) {
    spec_.quarantine.failures = failures;
    spec_.quarantine.window_h = window_h;
    spec_.quarantine.cooldown_h = cooldown_h;
    return *this;
  }
  ClusterBuilder& storage(std::string root) {
    spec_.storage_root = std::move(root);
    return *this;
  }
  // A Kubernetes cluster's volume (kubernetes.volumes): a claim mounted at `mount`.
  ClusterBuilder& kube_volume(std::string name, std::string claim, std::string mount,
                              bool read_only = false) {
    PodVolume v;
    v.name = std::move(name);
    v.claim = std::move(claim);
    v.mount = std::move(mount);
    v.read_only = read_only;
    spec_.kubernetes.pod.volumes.push_back(std::move(v));
    return *this;
  }
  // Hot spares held idle for gangs that lose a node (issue 38).
  ClusterBuilder& spares(int n) {
    spec_.spares = n;
    return *this;
  }
  // storage.node_local: each node's own directory ("{node}" for nodes that share a disk).
  ClusterBuilder& node_local(std::string root) {
    spec_.node_local_root = std::move(root);
    return *this;
  }
  ClusterBuilder& bwlimit_mb_s(double mb) {
    spec_.data.bwlimit_mb_s = mb;
    return *this;
  }
  ClusterBuilder& audit_every_s(double s) {
    spec_.data.audit_interval_s = s;
    return *this;
  }
  ClusterBuilder& throttle_interval_s(double s) {
    spec_.data.throttle.interval_s = s;
    return *this;
  }
  ClusterBuilder& provider(std::string p) {
    spec_.provider = std::move(p);
    return *this;
  }
  ClusterBuilder& vendor(std::string v) {
    spec_.vendor = std::move(v);
    return *this;
  }
  ClusterSpec build() const { return spec_; }
  operator ClusterSpec() const { return spec_; }  // NOLINT(google-explicit-constructor)

 private:
  ClusterSpec spec_;
};

inline JobBuilder make_job() {
  return JobBuilder();
}
inline ClusterBuilder make_cluster(std::string name) {
  return ClusterBuilder(std::move(name));
}

}  // namespace orch::testing
