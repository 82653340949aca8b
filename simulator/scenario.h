#pragma once
// A simulation scenario (`orchestrate simulate SCENARIO.yaml`, docs/simulate.md): the
// simulated clusters, the job, how long and over which seeds, and which policies to compare.
// Parsed with the spec parsers' YAML reader, so a mistake is reported the same way:
// "<file>:<line>:<col>: <what is wrong>; expected <what was expected>".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/yaml_reader.h"
#include "simulator/world/failure_model.h"
#include "simulator/world/sim_world.h"

namespace orch::sim {

// The policies a scenario may compare (docs/simulate.md says what each models).
inline constexpr std::string_view kPolicyOrchestrate = "orchestrate";
inline constexpr std::string_view kPolicyRestartInPlace = "restart-in-place";
inline constexpr std::string_view kPolicyFailoverOnly = "failover-only";

struct Scenario {
  std::string name;
  std::string source;  // the file it came from, for messages
  std::uint64_t seed = 1;
  int seeds = 1;       // runs seed, seed+1, ... seed+seeds-1
  double days = 30;    // simulated time
  double poll_s = 30;  // how often orchestrate's site workers poll (simulated seconds)
  double tick_s = 30;  // how often the brain's timers run
  double transfer_bytes_per_s = 1.25e9;  // between any two sites (10 Gb/s)
  std::vector<std::string> policies = {std::string(kPolicyOrchestrate),
                                       std::string(kPolicyRestartInPlace),
                                       std::string(kPolicyFailoverOnly)};
  std::vector<SimCluster> clusters;  // in the order a person would list them
  // orchestrate's quarantine rule per cluster (the clusters file's `quarantine:`), by index.
  std::vector<QuarantineSpec> quarantine;
  SimJob job;
  int job_nodes = 1;
  int job_gpus_per_node = 8;
  // The job spec's placement.expected_run (nullopt: it does not say).
  std::optional<double> job_expected_run_s;
  std::vector<FailureCause> causes;  // the mix failures are drawn from

  double seconds() const { return days * 86400.0; }
};

// The parts of a scenario a fleet scenario (fleet_scenario.h) shares: the keys of one entry of
// `clusters:`, reading such an entry (its `quarantine:` too), and the `failures:` section.
const std::vector<std::string_view>& scenario_cluster_keys();
void read_scenario_cluster(yaml::MapView& c, const FailureLaw& law, SimCluster& out,
                           QuarantineSpec& quarantine);
void read_scenario_failures(const yaml::MapView& file, FailureLaw& law,
                            std::vector<FailureCause>& causes);

// The keys every scenario opens with (name, seed, seeds, days, poll_s, tick_s, transfer_gbps),
// read into the scenario's fields of those names; what is absent keeps its default.
void read_run_keys(yaml::MapView& file, std::string& name, std::uint64_t& seed, int& seeds,
                   double& days, double& poll_s, double& tick_s, double& transfer_bytes_per_s);
template <class S>
void read_run_keys(yaml::MapView& file, S& s) {
  read_run_keys(file, s.name, s.seed, s.seeds, s.days, s.poll_s, s.tick_s, s.transfer_bytes_per_s);
}

// Invalid with "<source>:<line>:<col>: ..." for anything it cannot simulate: unknown keys (with
// a "did you mean"), numbers out of range, a job larger than every cluster, an unknown policy.
Result<Scenario> parse_scenario(std::string_view text, std::string_view source);

}  // namespace orch::sim
