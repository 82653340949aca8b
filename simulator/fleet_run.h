#pragma once
// One seed of a fleet scenario (fleet_scenario.h) through the real brain (brain_harness.h): the
// workload drawn from the seed, each job submitted at its arrival time, and what became of every
// job and cluster, from the world's truth (steps kept, first step, completion) and the brain's
// attempt rows (GPUs held, preemptions).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "simulator/fleet_scenario.h"

namespace orch::sim {

// One job the workload drew (before it ran).
struct FleetArrival {
  double at_s = 0;
  std::size_t job_class = 0;  // index into FleetScenario::classes
  SimJob job;                 // the world's view: name, FLOPs, steps, saves
  int nodes = 1;
  int gpus_per_node = 8;
};

// The seed's workload: jobs, arrivals, sizes and lengths from their own random stream (the
// failures the world draws for the seed do not depend on it, nor it on them).
std::vector<FleetArrival> draw_workload(const FleetScenario& scenario, std::uint64_t seed);

struct FleetJobOutcome {
  std::string name;
  std::string job_class;
  std::string team;
  std::string priority;  // the class's priority as written ("" : none)
  int gpus = 0;
  double arrival_s = 0;
  bool refused = false;                // the brain refused it at submit
  std::optional<double> first_step_s;  // its first training step (the world's truth)
  std::optional<double> completed_s;   // when it kept its last step
  std::string state;                   // the brain's state of it at the end
  int preempted = 0;                   // its attempts stopped for a job of higher priority
  double held_gpu_h = 0;               // GPUs x hours its attempts held (placement to end)
};

struct FleetClusterOutcome {
  std::string name;
  int gpus = 0;
  double held_gpu_h = 0;    // GPUs x hours of the attempts placed there (placement to end)
  double useful_gpu_h = 0;  // GPUs x hours of the steps kept there (the world's truth)
  double useful_flops = 0;  // FLOPs of those steps
  double held_cost = 0;     // the held GPU-hours at the cluster's price (windows applied)
  double rent = 0;          // every GPU of it over the whole window at its price
  int preemptions = 0;      // attempts stopped there for a job of higher priority
};

struct FleetRunOutcome {
  std::uint64_t seed = 0;
  double simulated_s = 0;
  std::vector<FleetJobOutcome> jobs;
  std::vector<FleetClusterOutcome> clusters;
  std::int64_t events = 0;
  std::int64_t events_refused = 0;
  double wall_s = 0;
};

Result<FleetRunOutcome> run_fleet(const FleetScenario& scenario, std::uint64_t seed);

}  // namespace orch::sim
