#pragma once
// What a simulation reports (docs/simulate.md): per policy and seed, the job's ETTR, useful
// FLOPs and GPU-hours, steps lost, interruptions by cause, detection and restart times,
// quarantines and the bound (exact renewal, the first order beside it); over the seeds, each
// policy's mean with a 95% confidence interval and orchestrate's gain over each baseline in
// useful FLOPs, paired by seed. As a table, JSON, and an SVG chart. Policies are compared on
// FLOPs, never on GPU-hours: an hour of a slower GPU trains less (issue 45).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator/run_outcome.h"
#include "simulator/scenario.h"

namespace orch::sim {

struct JobMetrics {
  double elapsed_s = 0;     // from submission to the end of the window (or completion)
  double productive_s = 0;  // time spent on steps the job keeps
  double ettr = 0;          // productive_s / elapsed_s
  // Kept steps x FLOPs per step: what the comparison of policies is made on.
  double useful_flops = 0;
  // GPUs x hours the kept steps took, where they were made: an hour of a slower GPU counts as
  // much as one of a faster, so it compares nothing across clusters (useful_flops does).
  double useful_gpu_hours = 0;
  double gpu_hours_held = 0;  // GPUs x hours the job's runs held nodes
  // GPUs x hours of the clusters' hot spares, held idle for the job over the whole window
  // (issue 38): paid for, never trained on. With gpu_hours_held, what the job's GPUs cost.
  double spare_gpu_hours = 0;
  double useful_per_paid = 0;  // useful_gpu_hours / (gpu_hours_held + spare_gpu_hours)
  std::int64_t kept_steps = 0;
  std::int64_t steps_lost = 0;
  int interruptions = 0;
  std::map<std::string, int> by_cause;
  std::optional<double> median_detect_s;   // failure to a site's report of it
  std::optional<double> median_restart_s;  // failure to the next run's first step
  std::optional<double> mean_restart_s;    // the same, its mean: the tail counts in the ETTR
  int runs = 0;                            // runs launched (a relaunch with no failure counts)
  int nodes_quarantined = 0;
  std::map<std::string, double> productive_h_on;  // productive hours per cluster
  // The ETTR the exact renewal formula expects (scheduler/health/renewal.h) on the cluster where
  // it made most of its steps: C its save time, tau its interval there, R that cluster's restart
  // time plus half a poll (and a tiered save's drain), M the job's MTBF there (its nodes' rates,
  // lemons in their share, and the job's own failures). tau / (tau + C) without failures.
  double bound_ettr = 0;
  double first_order_bound = 0;  // 1 - C/tau - (tau/2 + R)/M on the same figures
  bool completed = false;
};

JobMetrics measure(const Scenario& scenario, const RunOutcome& run);

// Mean and 95% confidence interval (Student's t) of a sample; half_width 0 for one value.
struct Interval {
  double mean = 0;
  double half_width = 0;
};
Interval mean_interval(const std::vector<double>& values);

struct PolicyResult {
  std::string policy;
  std::vector<RunOutcome> runs;  // one per seed, in seed order
  std::vector<JobMetrics> metrics;
};

struct Report {
  const Scenario* scenario = nullptr;
  std::vector<PolicyResult> policies;  // in the scenario's order
  // Orchestrate's useful FLOPs over each baseline's, seed by seed: mean and interval.
  std::map<std::string, Interval> gain_over;
};

Report make_report(const Scenario& scenario, std::vector<PolicyResult> policies);
std::string render_table(const Report& report);
nlohmann::json report_json(const Report& report);
std::string render_svg(const Report& report);

}  // namespace orch::sim
