#pragma once
// A fleet scenario (`orchestrate simulate FLEET.yaml`, docs/simulate.md "Fleets"): many jobs
// arriving over time, of several teams and priorities, on priced clusters with the clusters
// file's quotas, priority classes and budgets, through the real brain. Told from a single-job
// scenario by its `workload:` (a single-job scenario has `job:`). Read with the spec parsers'
// YAML reader: "<file>:<line>:<col>: <what is wrong>; expected <what was expected>".

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"
#include "simulator/world/failure_model.h"
#include "simulator/world/sim_world.h"

namespace orch::sim {

// One kind of job of the workload: drawn with probability share / (sum of shares).
struct FleetJobClass {
  std::string name;                  // names the jobs drawn from it ("<name>-<n>")
  double share = 1;                  // relative weight
  std::string team;                  // "" : no team
  std::string priority;              // a class of priority_classes, or an integer; "" : 0
  int nodes_min = 1, nodes_max = 1;  // uniform
  int gpus_per_node = 8;
  double hours_min = 1, hours_max = 1;  // training time on the fastest cluster, log-uniform
  double step_s = 10;                   // a step's time on the fastest cluster
  double checkpoint_min = 30;           // minutes of training between saves (0: never)
  double save_s = 30;                   // seconds a save blocks
  double checkpoint_gb = 10;
};

struct FleetScenario {
  std::string name;
  std::string source;
  std::uint64_t seed = 1;
  int seeds = 1;
  double days = 7;
  double poll_s = 60;
  double tick_s = 60;
  double transfer_bytes_per_s = 1.25e9;
  std::vector<SimCluster> clusters;
  std::vector<ClusterSpec> cluster_specs;  // the clusters file's view: quarantine, price
  SchedulingSpec scheduling;               // priority_classes, teams (quotas, budgets), placement
  std::vector<FailureCause> causes;
  int jobs = 100;                 // how many jobs arrive
  double arrivals_per_hour = 10;  // Poisson
  double first_arrival_h = 0;     // arrivals start then
  std::vector<FleetJobClass> classes;

  double seconds() const { return days * 86400.0; }
  // The currency of the priced clusters ("" when none is priced).
  std::string currency() const;
};

// Whether a scenario's text is a fleet's (a top-level `workload:`); false when it does not read
// (parse_scenario then says why).
bool is_fleet_scenario(std::string_view text);

// Invalid with "<source>:<line>:<col>: ..." for anything it cannot simulate: unknown keys, numbers
// out of range, a job class that fits no cluster, an unknown team or priority class.
Result<FleetScenario> parse_fleet_scenario(std::string_view text, std::string_view source);

}  // namespace orch::sim
