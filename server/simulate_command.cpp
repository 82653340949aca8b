// `orchestrate simulate` (simulate_command.h).
#include "server/simulate_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/client_commands.h"
#include "simulator/simulate.h"

namespace orch {

namespace {

bool write_file(const std::string& path, const std::string& text, std::ostream& err) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    err << "orchestrate simulate: cannot write " << path << "\n";
    return false;
  }
  return true;
}

}  // namespace

int run_simulate(const SimulateOptions& o, std::ostream& out, std::ostream& err) {
  std::ifstream in(o.scenario, std::ios::binary);
  if (!in) {
    err << "orchestrate simulate: cannot read scenario \"" << o.scenario
        << "\"; expected a YAML file such as examples/simulate/lottery.yaml\n";
    return kExitUsage;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto scenario = sim::parse_scenario(text.str(), o.scenario);
  if (!scenario) {
    err << "orchestrate simulate: " << scenario.error().message << "\n";
    return kExitUsage;
  }
  if (o.seeds) scenario->seeds = *o.seeds;
  if (o.seed) scenario->seed = static_cast<std::uint64_t>(*o.seed);
  if (!o.policies.empty()) scenario->policies = o.policies;
  auto report = sim::simulate(*scenario, [&](const sim::RunOutcome& run) {
    if (o.quiet) return;
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.2f", run.wall_s);
    err << run.policy << " seed " << run.seed << ": " << wall << " s, " << run.events
        << " events\n";
  });
  if (!report) {
    err << "orchestrate simulate: " << report.error().message << "\n";
    return 1;
  }
  const auto json = sim::report_json(*report);
  if (o.output == "json") {
    out << json.dump(2) << "\n";
  } else {
    out << sim::render_table(*report);
  }
  if (!o.json_file.empty() && !write_file(o.json_file, json.dump(2) + "\n", err)) return 1;
  if (!o.chart_file.empty() && !write_file(o.chart_file, sim::render_svg(*report), err)) return 1;
  return kExitOk;
}

}  // namespace orch
