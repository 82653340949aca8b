#pragma once
// `orchestrate simulate SCENARIO.yaml` (docs/simulate.md): runs the scenario's policies over
// its seeds and prints the report; no server is needed.

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
};

// kExitOk, kExitUsage for a scenario that does not read (the message says where and why), 1
// when a run fails or a file cannot be written.
int run_simulate(const SimulateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace orch
