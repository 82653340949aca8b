#pragma once
// The fleet simulator's report (docs/simulate.md "Fleets"): per seed, named figures (queue wait
// percentiles per priority and team, GPU utilisation, useful GPU-hours and cost per useful
// GPU-hour per cluster, preemptions), their means over the seeds with 95% confidence intervals
// (Student's t), and `--compare`: two scenarios on the same seeds, the paired difference of each
// figure they share with its 95% interval. As a table and JSON.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator/fleet_run.h"
#include "simulator/fleet_scenario.h"

namespace orch::sim {

// One figure of one run: a key that names it in JSON ("wait_p90_h.hero", "utilisation.alpha")
// and what a table prints beside it.
struct FleetFigure {
  std::string key;
  std::string label;
  double value = 0;
};

// The figures of one seed, in the order the table prints them. Waits run from a job's
// submission to its first training step; a job that never started by the end counts the wait
// it had so far (the percentile is then a lower bound: `waiting_at_end` says how many).
std::vector<FleetFigure> fleet_figures(const FleetScenario& scenario, const FleetRunOutcome& run);

// A figure over the seeds: its mean and the half-width of the 95% interval (0 for one seed).
struct FleetSummaryRow {
  std::string key;
  std::string label;
  double mean = 0;
  double ci95 = 0;
  std::size_t n = 0;
};

struct FleetReport {
  FleetScenario scenario;
  std::vector<FleetRunOutcome> runs;
  std::vector<std::vector<FleetFigure>> figures;  // per run
  std::vector<FleetSummaryRow> summary;
};

FleetReport make_fleet_report(const FleetScenario& scenario, std::vector<FleetRunOutcome> runs);
std::string render_fleet_table(const FleetReport& report);
nlohmann::json fleet_report_json(const FleetReport& report);

// B - A for a figure both have, seed by seed.
struct FleetDifference {
  std::string key;
  std::string label;
  double a_mean = 0;
  double b_mean = 0;
  double mean = 0;  // of B - A over the seeds
  double ci95 = 0;
  std::size_t n = 0;
};

struct FleetComparison {
  FleetReport a;
  FleetReport b;
  std::vector<FleetDifference> differences;  // in A's order
};

// a and b ran on the same seeds, in the same order.
FleetComparison compare_fleets(FleetReport a, FleetReport b);
std::string render_comparison_table(const FleetComparison& comparison);
nlohmann::json comparison_json(const FleetComparison& comparison);

}  // namespace orch::sim
