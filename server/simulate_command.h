#pragma once
// `orchestrate simulate SCENARIO.yaml` (docs/simulate.md): runs the scenario's policies over
// its seeds and prints the report; a fleet scenario (one with `workload:`) runs its jobs
// through the brain and prints the fleet's figures; `--compare A.yaml B.yaml` runs two fleets on
// the same seeds and prints their paired differences. No server is needed.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace orch {

struct SimulateOptions {
  std::string scenario;               // the YAML file
  std::optional<int> seeds;           // overrides the scenario's
  std::optional<int> seed;            // the first seed, overrides the scenario's
  std::vector<std::string> policies;  // overrides the scenario's list
  std::string output = "table";       // table or json, on stdout
  std::string json_file;              // also write the JSON report here
  std::string chart_file;             // and the SVG chart here
  bool quiet = false;                 // no line per run on stderr
  // --compare A.yaml B.yaml: two fleet scenarios on the same seeds (A's, or --seed/--seeds),
  // the paired differences of their figures (docs/simulate.md "Comparing two fleets").
  std::vector<std::string> compare;
};

// kExitOk, kExitUsage for a scenario that does not read (the message says where and why), 1
// when a run fails or a file cannot be written.
int run_simulate(const SimulateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace orch
