// The fleet simulator's report (fleet_report.h).
#include "simulator/fleet_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "scheduler/spec/scheduling_section.h"
#include "simulator/students_t.h"

namespace orch::sim {

namespace {

// The p quantile (0..1) of sorted values, linearly interpolated between ranks.
double quantile(const std::vector<double>& sorted, double p) {
  if (sorted.size() == 1) return sorted[0];
  const double at = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::string priority_label(const std::string& p) {
  return p.empty() ? "default" : p;
}

// The priority classes the workload uses, highest first.
std::vector<std::string> priorities(const FleetScenario& s) {
  std::vector<std::pair<int, std::string>> seen;
  for (const auto& c : s.classes) {
    std::string why;
    const int value = resolve_priority(s.scheduling, c.priority, why).value_or(0);
    const std::string label = priority_label(c.priority);
    const bool known =
        std::any_of(seen.begin(), seen.end(), [&](const auto& x) { return x.second == label; });
    if (!known) seen.emplace_back(value, label);
  }
  std::stable_sort(seen.begin(), seen.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (const auto& p : seen) out.push_back(p.second);
  return out;
}

void add_waits(std::vector<FleetFigure>& out, const std::string& key, const std::string& who,
               std::vector<double> waits) {
  if (waits.empty()) return;
  std::sort(waits.begin(), waits.end());
  for (const auto& [name, p] :
       {std::pair{"p50", 0.5}, std::pair{"p90", 0.9}, std::pair{"p99", 0.99}}) {
    out.push_back({std::string("wait_") + name + "_h." + key,
                   "wait to first step " + std::string(name) + ", " + who + " (h)",
                   quantile(waits, p)});
  }
}

FleetSummaryRow summarise(const std::string& key, const std::string& label,
                          const std::vector<double>& values) {
  FleetSummaryRow row{key, label, 0, 0, values.size()};
  if (values.empty()) return row;
  double sum = 0;
  for (double v : values) sum += v;
  row.mean = sum / static_cast<double>(values.size());
  if (values.size() > 1) {
    double ss = 0;
    for (double v : values) ss += (v - row.mean) * (v - row.mean);
    const double sd = std::sqrt(ss / static_cast<double>(values.size() - 1));
    row.ci95 = t95(values.size() - 1) * sd / std::sqrt(static_cast<double>(values.size()));
  }
  return row;
}

std::string number(double v) {
  char buf[64];
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf,
                a >= 1000  ? "%.0f"
                : a >= 10  ? "%.1f"
                : a >= 0.1 ? "%.2f"
                           : "%.3f",
                v);
  return buf;
}

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

std::string ci_text(double ci, std::size_t n) {
  return n > 1 ? "± " + number(ci) : "-";
}

}  // namespace

std::vector<FleetFigure> fleet_figures(const FleetScenario& s, const FleetRunOutcome& run) {
  std::vector<FleetFigure> out;
  int completed = 0, waiting = 0, refused = 0;
  std::map<std::string, std::vector<double>> by_priority, by_team;
  std::map<std::string, double> team_held;
  std::vector<double> all;
  for (const auto& j : run.jobs) {
    if (j.refused) ++refused;
    if (j.completed_s) ++completed;
    if (j.refused || j.state == "not arrived") continue;
    if (!j.first_step_s) ++waiting;
    const double wait = (j.first_step_s ? *j.first_step_s : run.simulated_s) - j.arrival_s;
    const double h = std::max(0.0, wait) / 3600;
    by_priority[priority_label(j.priority)].push_back(h);
    if (!j.team.empty()) {
      by_team[j.team].push_back(h);
      team_held[j.team] += j.held_gpu_h;
    }
    all.push_back(h);
  }
  out.push_back({"jobs_arrived", "jobs arrived", static_cast<double>(all.size() + refused)});
  out.push_back({"jobs_completed", "jobs completed", static_cast<double>(completed)});
  out.push_back({"waiting_at_end", "jobs never started by the end", static_cast<double>(waiting)});
  if (refused > 0)
    out.push_back({"refused", "jobs refused at submit", static_cast<double>(refused)});
  for (const auto& p : priorities(s)) add_waits(out, p, "priority " + p, by_priority[p]);
  add_waits(out, "all", "all jobs", all);
  for (const auto& [team, waits] : by_team) {
    add_waits(out, "team." + team, "team " + team, waits);
    out.push_back({"held_gpu_h.team." + team, "GPU-hours held, team " + team, team_held[team]});
  }
  const double hours = run.simulated_s / 3600;
  const std::string money = s.currency();
  double held = 0, useful = 0, rent = 0, held_cost = 0, gpus = 0;
  int preemptions = 0;
  auto cluster_figures = [&](const std::string& key, const std::string& who, double c_gpus,
                             double c_held, double c_useful, double c_rent, double c_held_cost,
                             int c_preemptions) {
    out.push_back(
        {"utilisation." + key, "GPU utilisation (held), " + who, c_held / (c_gpus * hours)});
    out.push_back({"useful_gpu_h." + key, "useful GPU-hours, " + who, c_useful});
    if (!money.empty() && c_useful > 0) {
      out.push_back({"cost_per_useful_gpu_h." + key,
                     money + " per useful GPU-hour (all GPUs rented), " + who, c_rent / c_useful});
      out.push_back({"held_cost_per_useful_gpu_h." + key,
                     money + " per useful GPU-hour (GPUs held), " + who, c_held_cost / c_useful});
    }
    out.push_back({"preemptions." + key, "preemptions for priority, " + who,
                   static_cast<double>(c_preemptions)});
  };
  for (const auto& c : run.clusters) {
    cluster_figures(c.name, "cluster " + c.name, c.gpus, c.held_gpu_h, c.useful_gpu_h, c.rent,
                    c.held_cost, c.preemptions);
    held += c.held_gpu_h;
    useful += c.useful_gpu_h;
    rent += c.rent;
    held_cost += c.held_cost;
    gpus += c.gpus;
    preemptions += c.preemptions;
  }
  cluster_figures("fleet", "fleet", gpus, held, useful, rent, held_cost, preemptions);
  return out;
}

FleetReport make_fleet_report(const FleetScenario& scenario, std::vector<FleetRunOutcome> runs) {
  FleetReport r;
  r.scenario = scenario;
  r.runs = std::move(runs);
  std::vector<std::string> order;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::vector<double>> values;
  for (const auto& run : r.runs) {
    r.figures.push_back(fleet_figures(scenario, run));
    for (const auto& f : r.figures.back()) {
      if (!labels.count(f.key)) order.push_back(f.key);
      labels[f.key] = f.label;
      values[f.key].push_back(f.value);
    }
  }
  for (const auto& key : order) r.summary.push_back(summarise(key, labels[key], values[key]));
  return r;
}

std::string render_fleet_table(const FleetReport& r) {
  std::ostringstream o;
  const FleetScenario& s = r.scenario;
  o << "fleet " << s.name << ": " << s.jobs << " jobs over " << s.clusters.size() << " clusters, "
    << number(s.days) << " days, " << r.runs.size()
    << " seed(s); means with 95% confidence intervals over the seeds\n\n";
  o << pad("figure", 58) << pad("mean", 12) << "95% CI\n";
  for (const auto& row : r.summary) {
    o << pad(row.label, 58) << pad(number(row.mean), 12) << ci_text(row.ci95, row.n) << "\n";
  }
  return o.str();
}

nlohmann::json fleet_report_json(const FleetReport& r) {
  nlohmann::json j;
  j["scenario"] = r.scenario.name;
  j["currency"] = r.scenario.currency();
  j["jobs"] = r.scenario.jobs;
  j["days"] = r.scenario.days;
  nlohmann::json summary = nlohmann::json::object();
  for (const auto& row : r.summary) {
    summary[row.key] = {{"label", row.label}, {"mean", row.mean}, {"ci95", row.ci95}, {"n", row.n}};
  }
  j["summary"] = summary;
  j["runs"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const FleetRunOutcome& run = r.runs[i];
    nlohmann::json figures = nlohmann::json::object();
    for (const auto& f : r.figures[i]) figures[f.key] = f.value;
    nlohmann::json clusters = nlohmann::json::array();
    for (const auto& c : run.clusters) {
      clusters.push_back({{"name", c.name},
                          {"gpus", c.gpus},
                          {"held_gpu_h", c.held_gpu_h},
                          {"useful_gpu_h", c.useful_gpu_h},
                          {"useful_flops", c.useful_flops},
                          {"held_cost", c.held_cost},
                          {"rent", c.rent},
                          {"preemptions", c.preemptions}});
    }
    j["runs"].push_back({{"seed", run.seed},
                         {"events", run.events},
                         {"events_refused", run.events_refused},
                         {"wall_s", run.wall_s},
                         {"figures", figures},
                         {"clusters", clusters}});
  }
  return j;
}

FleetComparison compare_fleets(FleetReport a, FleetReport b) {
  FleetComparison c;
  const std::size_t n = std::min(a.figures.size(), b.figures.size());
  for (const auto& row : a.summary) {
    std::vector<double> diffs, av, bv;
    for (std::size_t i = 0; i < n; ++i) {
      auto find = [&](const std::vector<FleetFigure>& fs) -> const FleetFigure* {
        for (const auto& f : fs) {
          if (f.key == row.key) return &f;
        }
        return nullptr;
      };
      const FleetFigure* x = find(a.figures[i]);
      const FleetFigure* y = find(b.figures[i]);
      if (x == nullptr || y == nullptr) continue;
      diffs.push_back(y->value - x->value);
      av.push_back(x->value);
      bv.push_back(y->value);
    }
    if (diffs.empty()) continue;
    const FleetSummaryRow d = summarise(row.key, row.label, diffs);
    c.differences.push_back({row.key, row.label, summarise(row.key, row.label, av).mean,
                             summarise(row.key, row.label, bv).mean, d.mean, d.ci95, d.n});
  }
  c.a = std::move(a);
  c.b = std::move(b);
  return c;
}

std::string render_comparison_table(const FleetComparison& c) {
  std::ostringstream o;
  o << "A: " << c.a.scenario.name << " (" << c.a.scenario.source << ")\nB: " << c.b.scenario.name
    << " (" << c.b.scenario.source << ")\n"
    << "paired by seed over " << c.a.runs.size()
    << " seed(s); B - A with its 95% confidence interval (* : the interval excludes 0)\n\n";
  o << pad("figure", 58) << pad("A", 11) << pad("B", 11) << pad("B - A", 11) << "95% CI\n";
  for (const auto& d : c.differences) {
    const bool clear = d.n > 1 && std::fabs(d.mean) > d.ci95;
    o << pad(d.label, 58) << pad(number(d.a_mean), 11) << pad(number(d.b_mean), 11)
      << pad(number(d.mean), 11) << ci_text(d.ci95, d.n) << (clear ? " *" : "") << "\n";
  }
  return o.str();
}

nlohmann::json comparison_json(const FleetComparison& c) {
  nlohmann::json j;
  j["a"] = fleet_report_json(c.a);
  j["b"] = fleet_report_json(c.b);
  nlohmann::json diffs = nlohmann::json::object();
  for (const auto& d : c.differences) {
    diffs[d.key] = {{"label", d.label}, {"a_mean", d.a_mean}, {"b_mean", d.b_mean},
                    {"mean", d.mean},   {"ci95", d.ci95},     {"n", d.n}};
  }
  j["differences"] = diffs;
  return j;
}

}  // namespace orch::sim
