#pragma once
// The providers the ClusterPort contract suite (contract_test.cpp) runs against. Each is a
// small struct with the same static surface:
//
//   kName                  the suffix of the typed suite's name (Contract/local, ...)
//   kNodeLostReported      whether the provider says node_lost when a node fails under a run
//   kCancelMayPurgeRun     whether a cancelled run may read as unknown (deleted) before exited
//   start() / stop()       bring the provider's world up / down once per suite (a lab, a fake)
//   start_error()          why start() failed ("" when it did not)
//   make_site()            a fresh ClusterPort on that world
//   fail_node(launch, obs) the strongest failure of the run's node this provider can inject
//   heal(obs)              undo fail_node so later tests get a healthy site
//   site_jobs(token)       how many jobs the provider itself holds for a token
//   cleanup(token, launch) kill whatever is left of a run (after the test's own cancel)

#include <memory>
#include <optional>
#include <string>

#include "scheduler/cluster_port.h"

namespace orch::contract {

// Local: an orchestrate-agent process group per run. There is no node under a local process,
// so its failure is the group SIGKILLed (what an OOM killer or a reboot does): killed_by_signal.
struct LocalProvider {
  static constexpr const char* kName = "local";
  static constexpr bool kNodeLostReported = false;
  static constexpr bool kCancelMayPurgeRun = false;
  static void start();
  static void stop();
  static const std::string& start_error();
  static std::unique_ptr<ClusterPort> make_site();
  static Result<void> fail_node(const LaunchResult& launch, const RunObservation& running);
  static void heal(const RunObservation& running);
  static Result<int> site_jobs(const std::string& token);
  static void cleanup(const std::string& token, const LaunchResult& launch);
};

// Slurm: SlurmSite over SSH to one single-node cluster of a private SlurmLab. The node failure
// is an admin's DOWN (scontrol update state=down): Slurm ends the job NODE_FAIL.
struct SlurmProvider {
  static constexpr const char* kName = "slurm";
  static constexpr bool kNodeLostReported = true;
  static constexpr bool kCancelMayPurgeRun = false;
  static void start();
  static void stop();
  static const std::string& start_error();
  static std::unique_ptr<ClusterPort> make_site();
  static Result<void> fail_node(const LaunchResult& launch, const RunObservation& running);
  static void heal(const RunObservation& running);
  static Result<int> site_jobs(const std::string& token);
  static void cleanup(const std::string& token, const LaunchResult& launch);
};

// Kubernetes: KubernetesSite on the fake API server (two nodes, pods as local processes). The
// node failure is POST /fake/nodes/NODE/notready: the node is lost, its pods Failed/NodeLost.
struct KubeProvider {
  static constexpr const char* kName = "kubernetes";
  static constexpr bool kNodeLostReported = true;
  // cancel DELETEs the Job (propagation Background): once its pods are gone the site no longer
  // knows the token, so observe can go from running straight to unknown, never saying exited.
  static constexpr bool kCancelMayPurgeRun = true;
  static void start();
  static void stop();
  static const std::string& start_error();
  static std::unique_ptr<ClusterPort> make_site();
  static Result<void> fail_node(const LaunchResult& launch, const RunObservation& running);
  static void heal(const RunObservation& running);
  static Result<int> site_jobs(const std::string& token);
  static void cleanup(const std::string& token, const LaunchResult& launch);
};

}  // namespace orch::contract
