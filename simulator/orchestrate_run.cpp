// The orchestrate policy over the simulated world (orchestrate_run.h).
#include "simulator/orchestrate_run.h"

#include <chrono>
#include <string>
#include <vector>

#include "scheduler/lifecycle/attempt_recovery.h"
#include "simulator/brain_harness.h"

namespace orch::sim {

Result<RunOutcome> run_orchestrate(const Scenario& scenario, std::uint64_t seed) {
  const auto wall_start = std::chrono::steady_clock::now();
  auto causes = CauseMix::make(scenario.causes);
  if (!causes) return causes.error();
  auto world = SimWorld::make(seed, scenario.clusters, {scenario.job}, *causes);
  if (!world) return world.error();
  SimWorld& w = **world;

  std::vector<ClusterSpec> specs;
  for (std::size_t i = 0; i < scenario.clusters.size(); ++i) {
    specs.push_back(
        sim_cluster_spec(scenario.clusters[i], scenario.poll_s, scenario.job.drain_s > 0));
    if (i < scenario.quarantine.size()) specs.back().quarantine = scenario.quarantine[i];
  }
  auto harness = BrainHarness::make(w, std::move(specs), {}, scenario.transfer_bytes_per_s);
  if (!harness) return harness.error();
  BrainHarness& h = **harness;

  RunOutcome out;
  out.policy = std::string(kPolicyOrchestrate);
  out.seed = seed;
  out.simulated_s = scenario.seconds();
  JobSpec spec = sim_job_spec(scenario.job, scenario.job_nodes, scenario.job_gpus_per_node,
                              scenario.clusters, scenario.poll_s);
  spec.expected_run_s = scenario.job_expected_run_s;
  auto submitted = h.submit(std::move(spec));
  if (!submitted) return submitted.error();
  const JobId job_id = *submitted;
  Store& store = h.store();
  HarnessLoop loop;
  loop.end = scenario.seconds();
  loop.poll_s = scenario.poll_s;
  loop.tick_s = scenario.tick_s;
  loop.runs_steadily = [&] {
    auto job = store.job(job_id);
    return job && *job && (*job)->state == JobState::running;
  };
  h.run(loop);
  {
    std::lock_guard<std::mutex> hold(h.world_lock());
    out.truth = w.truth(scenario.job.name);
  }
  out.events = h.events();
  out.events_refused = h.events_refused();
  if (auto attempts = store.attempts_of(job_id)) {
    for (std::size_t i = 1; i < attempts->size(); ++i) {
      const auto recovery = recovery_between((*attempts)[i - 1], (*attempts)[i]);
      if (!recovery) continue;
      const RecoveryBreakdown& b = *recovery;
      auto& parts = out.recovery_parts;
      if (b.detection_s) parts["detection"].push_back(*b.detection_s);
      parts["backoff"].push_back(b.backoff_s);
      parts["placing"].push_back(b.placing_s);
      if (b.site_s) parts["site"].push_back(*b.site_s);
      if (b.startup_s) parts["startup"].push_back(*b.startup_s);
    }
  }
  if (auto nodes = store.all_nodes()) {
    for (const NodeRow& n : *nodes) out.nodes_quarantined += n.quarantines;
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace orch::sim
