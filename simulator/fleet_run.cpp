// One seed of a fleet scenario through the real brain (fleet_run.h).
#include "simulator/fleet_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include "scheduler/model/price.h"
#include "scheduler/spec/scheduling_section.h"
#include "simulator/brain_harness.h"
#include "simulator/sim_clock.h"
#include "simulator/world/sim_random.h"

namespace orch::sim {

namespace {

// The workload's own random stream of a seed (the world's streams are per node and cluster).
constexpr std::uint64_t kWorkloadStream = 0xF1EE7'0000'0000ULL;
constexpr std::int64_t kTokensPerStep = 1 << 20;

double best_flops_per_gpu(const FleetScenario& s) {
  double best = 0;
  for (const auto& c : s.clusters) best = std::max(best, c.peak_flops_per_gpu * c.mfu);
  return best;
}

std::size_t draw_class(const FleetScenario& s, SimRandom& r) {
  double total = 0;
  for (const auto& c : s.classes) total += c.share;
  double u = r.uniform01() * total;
  for (std::size_t i = 0; i < s.classes.size(); ++i) {
    if (u < s.classes[i].share) return i;
    u -= s.classes[i].share;
  }
  return s.classes.size() - 1;
}

std::string job_name(const FleetJobClass& c, int n) {
  std::string digits = std::to_string(n);
  return c.name + "-" + std::string(digits.size() < 4 ? 4 - digits.size() : 0, '0') + digits;
}

JobSpec job_spec(const FleetScenario& s, const FleetArrival& a) {
  const FleetJobClass& c = s.classes[a.job_class];
  JobSpec j = sim_job_spec(a.job, a.nodes, a.gpus_per_node, s.clusters, s.poll_s);
  j.team = c.team;
  if (s.scheduling.priority_classes.count(c.priority)) {
    j.priority_class = c.priority;
  } else if (!c.priority.empty()) {
    std::string why;
    j.priority = resolve_priority(s.scheduling, c.priority, why).value_or(0);
  }
  return j;
}

}  // namespace

std::vector<FleetArrival> draw_workload(const FleetScenario& s, std::uint64_t seed) {
  SimRandom r(seed, kWorkloadStream);
  const double per_gpu = best_flops_per_gpu(s);
  std::vector<FleetArrival> out;
  double t = s.first_arrival_h * 3600;
  for (int n = 1; n <= s.jobs; ++n) {
    if (n > 1) t += r.exponential(3600 / s.arrivals_per_hour);
    FleetArrival a;
    a.at_s = t;
    a.job_class = draw_class(s, r);
    const FleetJobClass& c = s.classes[a.job_class];
    const int span = c.nodes_max - c.nodes_min + 1;
    a.nodes = c.nodes_min + std::min(span - 1, static_cast<int>(r.uniform01() * span));
    a.gpus_per_node = c.gpus_per_node;
    const double hours =
        std::exp(std::log(c.hours_min) + r.uniform01() * std::log(c.hours_max / c.hours_min));
    a.job.name = job_name(c, n);
    a.job.flops_per_step = c.step_s * a.nodes * a.gpus_per_node * per_gpu;
    a.job.tokens_per_step = kTokensPerStep;
    a.job.total_steps = std::max<std::int64_t>(1, std::llround(hours * 3600 / c.step_s));
    if (c.checkpoint_min > 0) {
      a.job.checkpoint_every =
          std::max<std::int64_t>(1, std::llround(c.checkpoint_min * 60 / c.step_s));
    }
    a.job.save_s = c.save_s;
    a.job.checkpoint_bytes = static_cast<std::int64_t>(c.checkpoint_gb * 1e9);
    out.push_back(std::move(a));
  }
  return out;
}

Result<FleetRunOutcome> run_fleet(const FleetScenario& s, std::uint64_t seed) {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::vector<FleetArrival> arrivals = draw_workload(s, seed);
  auto causes = CauseMix::make(s.causes);
  if (!causes) return causes.error();
  std::vector<SimJob> jobs;
  for (const auto& a : arrivals) jobs.push_back(a.job);
  auto world = SimWorld::make(seed, s.clusters, jobs, *causes);
  if (!world) return world.error();
  SimWorld& w = **world;
  std::vector<ClusterSpec> specs;
  for (std::size_t i = 0; i < s.clusters.size(); ++i) {
    specs.push_back(sim_cluster_spec(s.clusters[i], s.poll_s, false));
    specs.back().quarantine = s.cluster_specs[i].quarantine;
    specs.back().price = s.cluster_specs[i].price;
    // No periodic audit of every copy: with hundreds of jobs' checkpoints it was most of the
    // brain's work and changes none of the fleet's figures (docs/simulate.md, "Fleets").
    specs.back().data.audit_interval_s = 0;
  }
  auto harness = BrainHarness::make(w, specs, s.scheduling, s.transfer_bytes_per_s);
  if (!harness) return harness.error();
  BrainHarness& h = **harness;

  FleetRunOutcome out;
  out.seed = seed;
  out.simulated_s = s.seconds();
  std::vector<std::optional<JobId>> ids(arrivals.size());
  std::size_t next = 0;
  HarnessLoop loop;
  loop.end = s.seconds();
  loop.poll_s = s.poll_s;
  loop.tick_s = s.tick_s;
  loop.next_arrival = [&] {
    return next < arrivals.size() ? arrivals[next].at_s : std::numeric_limits<double>::infinity();
  };
  loop.arrive = [&](double t) {
    for (; next < arrivals.size() && arrivals[next].at_s <= t; ++next) {
      auto id = h.submit(job_spec(s, arrivals[next]));
      if (id) ids[next] = *id;
    }
  };
  loop.runs_steadily = [&] {
    auto waiting = h.store().waiting_jobs();
    return waiting && waiting->empty();
  };
  h.run(loop);
  out.events = h.events();
  out.events_refused = h.events_refused();

  std::map<std::string, std::size_t> cluster_of;
  const Millis end_ms = sim_ms(s.seconds());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    cluster_of[specs[i].name] = i;
    FleetClusterOutcome c;
    c.name = specs[i].name;
    c.gpus = specs[i].total_gpus();
    c.rent = cost_of(specs[i].price, kSimEpochMs, end_ms, c.gpus);
    out.clusters.push_back(std::move(c));
  }
  std::vector<JobId> known;
  for (const auto& id : ids) {
    if (id) known.push_back(*id);
  }
  auto attempts = h.store().attempts_of_jobs(known);
  if (!attempts) return attempts.error();
  std::lock_guard<std::mutex> hold(h.world_lock());
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const FleetArrival& a = arrivals[i];
    const FleetJobClass& c = s.classes[a.job_class];
    FleetJobOutcome j;
    j.name = a.job.name;
    j.job_class = c.name;
    j.team = c.team;
    j.priority = c.priority;
    j.gpus = a.nodes * a.gpus_per_node;
    j.arrival_s = a.at_s;
    j.refused = next > i && !ids[i];
    const JobTruth truth = w.truth(a.job.name);
    j.first_step_s = truth.first_step_s;
    j.completed_s = truth.completed_s;
    for (const KeptSteps& k : truth.kept) {
      auto at = cluster_of.find(k.cluster);
      if (at == cluster_of.end()) continue;
      const double steps = static_cast<double>(k.to - k.from);
      out.clusters[at->second].useful_gpu_h += steps * k.step_s * j.gpus / 3600;
      out.clusters[at->second].useful_flops += steps * a.job.flops_per_step;
    }
    if (ids[i]) {
      if (auto row = h.store().job(*ids[i]); row && *row)
        j.state = std::string(to_string((*row)->state));
      auto rows = attempts->find(*ids[i]);
      for (const AttemptRow& att :
           rows == attempts->end() ? std::vector<AttemptRow>{} : rows->second) {
        auto at = cluster_of.find(att.cluster);
        if (at == cluster_of.end()) continue;
        FleetClusterOutcome& k = out.clusters[at->second];
        const Millis to = std::min(att.ended_ms.value_or(end_ms), end_ms);
        const double held =
            static_cast<double>(std::max<Millis>(0, to - att.started_ms)) / 3.6e6 * att.gpus;
        k.held_gpu_h += held;
        j.held_gpu_h += held;
        k.held_cost += cost_of(specs[at->second].price, att.started_ms, to, att.gpus);
        if (att.cause == ExitCause::priority_preempted) {
          ++k.preemptions;
          ++j.preempted;
        }
      }
    } else {
      j.state = j.refused ? "refused" : "not arrived";
    }
    out.jobs.push_back(std::move(j));
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace orch::sim
