// `orchestrate simulate` (simulate_command.h).
#include "server/simulate_command.h"

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "cli/client_commands.h"
#include "simulator/fleet_report.h"
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

// The scenario file's text; false (said on err) when it cannot be read.
bool read_scenario(const std::string& path, std::string& text, std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "orchestrate simulate: cannot read scenario \"" << path
        << "\"; expected a YAML file such as examples/simulate/lottery.yaml\n";
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

// A line per run on stderr ("orchestrate seed 3: 1.20 s, 5120 events"), unless --quiet.
void say_seed(const SimulateOptions& o, const std::string& name, std::uint64_t seed, double wall_s,
              std::int64_t events, std::ostream& err) {
  if (o.quiet) return;
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.2f", wall_s);
  err << name << " seed " << seed << ": " << wall << " s, " << events << " events\n";
}

// A fleet scenario read, its seeds set from the options;
// nullopt (said on err) when it does not read.
std::optional<sim::FleetScenario> load_fleet(const SimulateOptions& o, const std::string& path,
                                             const std::string& text, std::ostream& err) {
  auto scenario = sim::parse_fleet_scenario(text, path);
  if (!scenario) {
    err << "orchestrate simulate: " << scenario.error().message << "\n";
    return std::nullopt;
  }
  if (o.seeds) scenario->seeds = *o.seeds;
  if (o.seed) scenario->seed = static_cast<std::uint64_t>(*o.seed);
  return std::move(*scenario);
}

Result<sim::FleetReport> run_fleet_seeds(const SimulateOptions& o, const sim::FleetScenario& s,
                                         std::ostream& err) {
  std::vector<sim::FleetRunOutcome> runs;
  for (int i = 0; i < s.seeds; ++i) {
    auto run = sim::run_fleet(s, s.seed + static_cast<std::uint64_t>(i));
    if (!run) return run.error();
    say_seed(o, s.name, run->seed, run->wall_s, run->events, err);
    runs.push_back(std::move(*run));
  }
  return sim::make_fleet_report(s, std::move(runs));
}

int print_result(const SimulateOptions& o, const nlohmann::json& json, const std::string& table,
                 std::ostream& out, std::ostream& err) {
  if (o.output == "json") {
    out << json.dump(2) << "\n";
  } else {
    out << table;
  }
  if (!o.json_file.empty() && !write_file(o.json_file, json.dump(2) + "\n", err)) return 1;
  return kExitOk;
}

int run_fleet_command(const SimulateOptions& o, const std::string& text, std::ostream& out,
                      std::ostream& err) {
  if (!o.policies.empty() || !o.chart_file.empty()) {
    err << "orchestrate simulate: " << o.scenario
        << " is a fleet scenario (it has `workload:`): --policy and --chart are for single-job "
           "scenarios; expected neither\n";
    return kExitUsage;
  }
  auto scenario = load_fleet(o, o.scenario, text, err);
  if (!scenario) return kExitUsage;
  auto report = run_fleet_seeds(o, *scenario, err);
  if (!report) {
    err << "orchestrate simulate: " << report.error().message << "\n";
    return 1;
  }
  return print_result(o, sim::fleet_report_json(*report), sim::render_fleet_table(*report), out,
                      err);
}

int run_compare(const SimulateOptions& o, std::ostream& out, std::ostream& err) {
  if (o.compare.size() != 2 || !o.scenario.empty() || !o.policies.empty() ||
      !o.chart_file.empty()) {
    err << "orchestrate simulate: --compare takes two fleet scenarios and no SCENARIO, --policy "
           "or --chart; expected orchestrate simulate --compare A.yaml B.yaml\n";
    return kExitUsage;
  }
  std::vector<sim::FleetScenario> fleets;
  for (const auto& path : o.compare) {
    std::string text;
    if (!read_scenario(path, text, err)) return kExitUsage;
    if (!sim::is_fleet_scenario(text)) {
      err << "orchestrate simulate: " << path
          << ": --compare compares fleet scenarios; expected a scenario with `workload:`\n";
      return kExitUsage;
    }
    auto fleet = load_fleet(o, path, text, err);
    if (!fleet) return kExitUsage;
    fleets.push_back(std::move(*fleet));
  }
  // The same seeds for both: A's (or the options').
  fleets[1].seed = fleets[0].seed;
  fleets[1].seeds = fleets[0].seeds;
  std::vector<sim::FleetReport> reports;
  for (const auto& fleet : fleets) {
    auto report = run_fleet_seeds(o, fleet, err);
    if (!report) {
      err << "orchestrate simulate: " << report.error().message << "\n";
      return 1;
    }
    reports.push_back(std::move(*report));
  }
  const auto comparison = sim::compare_fleets(std::move(reports[0]), std::move(reports[1]));
  return print_result(o, sim::comparison_json(comparison), sim::render_comparison_table(comparison),
                      out, err);
}

}  // namespace

int run_simulate(const SimulateOptions& o, std::ostream& out, std::ostream& err) {
  if (!o.compare.empty()) return run_compare(o, out, err);
  std::string text;
  if (!read_scenario(o.scenario, text, err)) return kExitUsage;
  if (sim::is_fleet_scenario(text)) return run_fleet_command(o, text, out, err);
  auto scenario = sim::parse_scenario(text, o.scenario);
  if (!scenario) {
    err << "orchestrate simulate: " << scenario.error().message << "\n";
    return kExitUsage;
  }
  if (o.seeds) scenario->seeds = *o.seeds;
  if (o.seed) scenario->seed = static_cast<std::uint64_t>(*o.seed);
  if (!o.policies.empty()) scenario->policies = o.policies;
  auto report = sim::simulate(*scenario, [&](const sim::RunOutcome& run) {
    say_seed(o, run.policy, run.seed, run.wall_s, run.events, err);
  });
  if (!report) {
    err << "orchestrate simulate: " << report.error().message << "\n";
    return 1;
  }
  if (int rc = print_result(o, sim::report_json(*report), sim::render_table(*report), out, err);
      rc != kExitOk) {
    return rc;
  }
  if (!o.chart_file.empty() && !write_file(o.chart_file, sim::render_svg(*report), err)) return 1;
  return kExitOk;
}

}  // namespace orch
