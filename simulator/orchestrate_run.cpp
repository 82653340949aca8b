// The orchestrate policy over the simulated world (orchestrate_run.h).
#include "simulator/orchestrate_run.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/sim/sim_site.h"
#include "scheduler/brain/brain.h"
#include "scheduler/lifecycle/attempt_recovery.h"
#include "scheduler/runtime/site_worker.h"
#include "scheduler/runtime/storage_worker.h"
#include "scheduler/store/store.h"
#include "simulator/sim_clock.h"
#include "simulator/sim_transfers.h"

namespace orch::sim {

namespace {

// When the job runs steadily and nothing else happened for a while, the brain's timers are
// looked at this often (hang limits, cooldowns, audits and retention are minutes or more).
constexpr double kIdleTickS = 300;

// Rounds of "the workers carry out what the brain just wrote" at one instant before time moves
// on (a launch, its confirmation, a listing, the next launch ...): far more than a chain needs.
constexpr int kSettleRounds = 32;

ClusterSpec cluster_spec(const SimCluster& c, const Scenario& s) {
  ClusterSpec spec;
  spec.name = c.name;
  spec.provider = "sim";
  spec.nodes = c.nodes;
  spec.gpus_per_node = c.gpus_per_node;
  spec.accelerator = "h100";
  spec.peak_tflops = c.peak_flops_per_gpu / 1e12;
  spec.checkpoint_root = c.checkpoint_root;
  spec.storage_root = "/sim/" + c.name;
  // Tiered saves: each node's own directory (its copies resumed from by a one-node job only).
  if (s.job.drain_s > 0) spec.node_local_root = "/sim/local/{node}";
  spec.poll_interval_ms = static_cast<int>(s.poll_s * 1000);
  return spec;
}

JobSpec job_spec(const Scenario& s) {
  JobSpec j;
  j.name = s.job.name;
  j.command = "simulated training of " + s.job.name;
  j.nodes = s.job_nodes;
  j.gpus_per_node = s.job_gpus_per_node;
  j.expected_run_s = s.job_expected_run_s;
  j.checkpoint.dir = "/sim/ckpt/" + s.job.name;
  if (s.job.checkpoint_every > 0) {
    j.checkpoint.interval_steps = static_cast<int>(
        std::min<std::int64_t>(s.job.checkpoint_every, std::numeric_limits<int>::max()));
  }
  if (s.job.tokens_per_step > 0) {
    j.model.flops_per_token = s.job.flops_per_step / static_cast<double>(s.job.tokens_per_step);
  }
  // The restart policy is the default one: its budget and backoff count failures in a row
  // without progress, so a run of weeks with hundreds of node failures needs nothing set.
  // The job prints progress every progress_every_s: silence for three of those is a hang.
  double every = 0;
  for (const auto& c : s.clusters) every = std::max(every, c.progress_every_s);
  j.health.hang_after_s = 3 * every + s.poll_s;
  return j;
}

std::string memory_uri() {
  static std::atomic<std::uint64_t> next{0};
  return "file:orchestrate-sim-" + std::to_string(next++) + "?mode=memory&cache=shared";
}

}  // namespace

Result<RunOutcome> run_orchestrate(const Scenario& scenario, std::uint64_t seed) {
  const auto wall_start = std::chrono::steady_clock::now();
  auto causes = CauseMix::make(scenario.causes);
  if (!causes) return causes.error();
  auto world = SimWorld::make(seed, scenario.clusters, {scenario.job}, *causes);
  if (!world) return world.error();
  SimWorld& w = **world;

  const std::string uri = memory_uri();
  auto store = Store::open(uri);  // held open for the run: the memory database lives with it
  if (!store) return store.error();
  FakeClock clock(kSimEpochMs);
  std::vector<ClusterSpec> specs;
  for (std::size_t i = 0; i < scenario.clusters.size(); ++i) {
    specs.push_back(cluster_spec(scenario.clusters[i], scenario));
    if (i < scenario.quarantine.size()) specs.back().quarantine = scenario.quarantine[i];
  }
  Brain brain(**store, clock, specs);
  if (auto r = brain.start(); !r) return r.error();

  std::deque<BrainEvent> events;
  auto post = [&events](BrainEvent e) { events.push_back(std::move(e)); };
  std::mutex lock;
  std::vector<std::unique_ptr<SimSite>> sites;
  std::vector<std::unique_ptr<SiteWorker>> workers;
  std::vector<std::unique_ptr<StorageWorker>> storage;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    sites.push_back(std::make_unique<SimSite>(w, lock, i, kSimEpochMs));
    auto reader = StoreReader::open(uri);
    auto storage_reader = StoreReader::open(uri);
    if (!reader) return reader.error();
    if (!storage_reader) return storage_reader.error();
    workers.push_back(std::make_unique<SiteWorker>(specs[i], *sites[i], std::move(*reader), post));
    storage.push_back(
        std::make_unique<StorageWorker>(specs[i], *sites[i], std::move(*storage_reader), post));
  }
  auto transfer_reader = StoreReader::open(uri);
  if (!transfer_reader) return transfer_reader.error();
  SimTransfers transfers(**transfer_reader, w, lock, scenario.transfer_bytes_per_s, kSimEpochMs,
                         post);

  RunOutcome out;
  out.policy = std::string(kPolicyOrchestrate);
  out.seed = seed;
  out.simulated_s = scenario.seconds();
  auto handle = [&](const BrainEvent& e) {
    ++out.events;
    if (!brain.handle(e)) ++out.events_refused;
  };
  auto drain = [&] {
    while (!events.empty()) {
      BrainEvent e = std::move(events.front());
      events.pop_front();
      handle(e);
    }
  };
  std::uint64_t seen_work = brain.work_epoch();
  auto settle = [&](double t) {
    for (int round = 0; round < kSettleRounds && brain.work_epoch() != seen_work; ++round) {
      seen_work = brain.work_epoch();
      for (std::size_t i = 0; i < workers.size(); ++i) {
        workers[i]->run_once();
        storage[i]->run_once();
      }
      transfers.step(t);
      drain();
    }
  };

  const double end = scenario.seconds();
  std::vector<double> last_poll(specs.size(), -1);
  // The earliest change at each site since its last poll that the world has already made: time
  // moved past it for another reason (a tick, another site's poll), and the world's next_change
  // no longer names it. Without it, a node that failed just before a tick went unseen until
  // the site's next change (a progress line, up to half an hour later).
  std::vector<double> unseen(specs.size(), std::numeric_limits<double>::infinity());
  double next_tick = 0;
  auto submitted = brain.handle(SubmitJob{job_spec(scenario)});
  ++out.events;
  if (!submitted) return submitted.error();
  const JobId job_id = submitted->job_id;
  // The server ticks every quarter second; most of those ticks find nothing due. Here the brain
  // ticks every tick_s while anything is going on (an event in the last two ticks, or the job
  // not running: waiting out a backoff, staging, moving), else every kIdleTickS.
  std::int64_t events_at_tick = 0;
  double last_activity = 0;
  auto steady = [&](double t) {
    if (t - last_activity < 2 * scenario.tick_s) return false;
    auto job = (*store)->job(job_id);
    return job && *job && (*job)->state == JobState::running;
  };
  for (;;) {
    double t = std::min(next_tick, transfers.next_finish());
    std::vector<double> due(specs.size());
    std::vector<double> change(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      change[i] = w.next_change(i, std::max(last_poll[i], 0.0));
      due[i] = next_poll(std::min(change[i], unseen[i]), last_poll[i], scenario.poll_s);
      t = std::min(t, due[i]);
    }
    if (t > end) break;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (change[i] <= t) unseen[i] = std::min(unseen[i], change[i]);
    }
    clock.set_ms(sim_ms(t));
    {
      std::lock_guard<std::mutex> hold(lock);
      w.advance_to(t);
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (due[i] > t) continue;
      workers[i]->run_once();
      last_poll[i] = t;
      unseen[i] = std::numeric_limits<double>::infinity();
    }
    const std::int64_t before = out.events;
    transfers.step(t);
    drain();
    // Something happened: the brain's timers (a backoff, a grace) are watched closely again.
    if (out.events != before) next_tick = std::min(next_tick, t + scenario.tick_s);
    if (next_tick <= t) {
      if (out.events != events_at_tick) last_activity = t;
      handle(Tick{});
      drain();
      settle(t);
      events_at_tick = out.events;
      next_tick = t + (steady(t) ? kIdleTickS : scenario.tick_s);
    }
    settle(t);
  }
  clock.set_ms(sim_ms(end));
  {
    std::lock_guard<std::mutex> hold(lock);
    w.advance_to(end);
    out.truth = w.truth(scenario.job.name);
  }
  if (auto attempts = (*store)->attempts_of(job_id)) {
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
  if (auto nodes = (*store)->all_nodes()) {
    for (const NodeRow& n : *nodes) out.nodes_quarantined += n.quarantines;
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace orch::sim
