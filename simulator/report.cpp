// The simulation's report (report.h).
#include "simulator/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "scheduler/health/goodput.h"
#include "scheduler/health/renewal.h"
#include "simulator/students_t.h"

namespace orch::sim {

namespace {

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// 1234567 -> "1,234,567".
std::string grouped(double v) {
  std::string digits = fixed(std::round(v), 0);
  std::string out;
  const bool negative = !digits.empty() && digits[0] == '-';
  if (negative) digits.erase(0, 1);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

std::string duration(std::optional<double> s) {
  if (!s) return "-";
  if (*s < 120) return fixed(*s, 0) + " s";
  if (*s < 7200) return fixed(*s / 60, 1) + " min";
  return fixed(*s / 3600, 1) + " h";
}

// Useful FLOPs are shown in EFLOP (10^18): a day of 16 H100s at 40% MFU is about 550.
constexpr double kEflop = 1e18;

// Three significant figures below 1,000 (a short run's EFLOP), grouped digits above.
std::string amount(double v) {
  const double a = std::abs(v);
  if (a >= 1000) return grouped(v);
  return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

const SimCluster* cluster_named(const Scenario& s, const std::string& name) {
  for (const auto& c : s.clusters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// The bound's figures: the renewal and first-order ETTR of the job on the cluster where it made
// most of its steps.
struct Bounds {
  double renewal = 0;
  double first_order = 0;
};

Bounds ettr_bounds(const Scenario& s, const JobMetrics& m) {
  std::string where;
  double most = -1;
  for (const auto& [name, h] : m.productive_h_on) {
    if (h > most) {
      most = h;
      where = name;
    }
  }
  const SimCluster* c = cluster_named(s, where.empty() ? s.clusters.front().name : where);
  if (c == nullptr) return {};
  const double gpus = static_cast<double>(s.job_nodes) * s.job_gpus_per_node;
  const double step_s = s.job.flops_per_step / (gpus * c->peak_flops_per_gpu * c->mfu);
  // A job that never saves starts again from nothing after each failure.
  const double tau = s.job.checkpoint_every > 0
                         ? static_cast<double>(s.job.checkpoint_every) * step_s
                         : std::numeric_limits<double>::infinity();
  const double mean_rate = 1 + c->lemon_fraction * (c->lemon_multiplier - 1);
  // Failures per second: its nodes' and its own (SimJob::mtbf_s), which do not grow with nodes.
  const double rate =
      s.job_nodes * mean_rate / c->law.mtbf_s + (s.job.mtbf_s > 0 ? 1 / s.job.mtbf_s : 0.0);
  const double job_mtbf = rate > 0 ? 1 / rate : std::numeric_limits<double>::infinity();
  // A held spare restarts faster; a tiered save's drain adds its lag to what a failure loses.
  const double restart =
      (c->spares > 0 ? std::min(c->spare_restart_s, c->restart_s) : c->restart_s) + s.poll_s / 2 +
      s.job.drain_s;
  return {renewal_ettr(s.job.save_s, tau, restart, job_mtbf),
          expected_ettr(s.job.save_s, tau, restart, job_mtbf)};
}

}  // namespace

Interval mean_interval(const std::vector<double>& values) {
  Interval r;
  if (values.empty()) return r;
  double sum = 0;
  for (double v : values) sum += v;
  r.mean = sum / static_cast<double>(values.size());
  if (values.size() < 2) return r;
  double sq = 0;
  for (double v : values) sq += (v - r.mean) * (v - r.mean);
  const double sd = std::sqrt(sq / static_cast<double>(values.size() - 1));
  r.half_width = t95(values.size() - 1) * sd / std::sqrt(static_cast<double>(values.size()));
  return r;
}

JobMetrics measure(const Scenario& s, const RunOutcome& run) {
  JobMetrics m;
  const JobTruth& t = run.truth;
  m.completed = t.completed_s.has_value();
  m.elapsed_s = t.completed_s ? std::min(*t.completed_s, run.simulated_s) : run.simulated_s;
  const double gpus = static_cast<double>(s.job_nodes) * s.job_gpus_per_node;
  for (const KeptSteps& k : t.kept) {
    const double steps = static_cast<double>(k.to - k.from);
    m.productive_s += steps * k.step_s;
    m.productive_h_on[k.cluster] += steps * k.step_s / 3600;
    m.useful_flops += steps * s.job.flops_per_step;
    m.useful_gpu_hours += steps * k.step_s * gpus / 3600;
  }
  m.ettr = m.elapsed_s > 0 ? m.productive_s / m.elapsed_s : 0;
  m.gpu_hours_held = t.gpu_seconds_held / 3600;
  for (const auto& c : s.clusters) {
    m.spare_gpu_hours += c.spares * static_cast<double>(c.gpus_per_node) * m.elapsed_s / 3600;
  }
  const double paid = m.gpu_hours_held + m.spare_gpu_hours;
  m.useful_per_paid = paid > 0 ? m.useful_gpu_hours / paid : 0;
  m.kept_steps = t.kept_steps();
  m.steps_lost = t.steps_lost;
  m.interruptions = static_cast<int>(t.interruptions.size());
  std::vector<double> detect, restart;
  for (const Interruption& i : t.interruptions) {
    ++m.by_cause[i.cause];
    if (i.seen_s) detect.push_back(*i.seen_s - i.at_s);
    if (i.resumed_s) restart.push_back(*i.resumed_s - i.at_s);
  }
  m.median_detect_s = median(detect);
  m.median_restart_s = median(restart);
  if (!restart.empty()) m.mean_restart_s = mean_interval(restart).mean;
  m.runs = t.runs;
  m.nodes_quarantined = run.nodes_quarantined;
  const Bounds bounds = ettr_bounds(s, m);
  m.bound_ettr = bounds.renewal;
  m.first_order_bound = bounds.first_order;
  return m;
}

Report make_report(const Scenario& scenario, std::vector<PolicyResult> policies) {
  Report r;
  r.scenario = &scenario;
  r.policies = std::move(policies);
  for (auto& p : r.policies) {
    p.metrics.clear();
    for (const auto& run : p.runs) p.metrics.push_back(measure(scenario, run));
  }
  const PolicyResult* ours = nullptr;
  for (const auto& p : r.policies) {
    if (p.policy == kPolicyOrchestrate) ours = &p;
  }
  if (ours == nullptr) return r;
  for (const auto& p : r.policies) {
    if (&p == ours) continue;
    std::vector<double> gains;
    for (std::size_t i = 0; i < p.metrics.size() && i < ours->metrics.size(); ++i) {
      if (p.metrics[i].useful_flops > 0) {
        gains.push_back(ours->metrics[i].useful_flops / p.metrics[i].useful_flops);
      }
    }
    r.gain_over[p.policy] = mean_interval(gains);
  }
  return r;
}

std::string render_table(const Report& r) {
  const Scenario& s = *r.scenario;
  std::ostringstream out;
  const std::size_t seeds = r.policies.empty() ? 0 : r.policies.front().runs.size();
  out << "scenario " << s.name << ": " << fixed(s.days, 0) << " days, job " << s.job.name << " on "
      << s.job_nodes << " nodes x " << s.job_gpus_per_node << " GPUs, " << seeds
      << (seeds == 1 ? " seed (" : " seeds (") << s.seed;
  if (seeds > 1) out << ".." << s.seed + seeds - 1;
  out << ")\n\n";
  out << pad("policy", 18) << pad("useful EFLOP (95% CI)", 28) << pad("GPU-h", 10) << pad("ETTR", 7)
      << pad("bound", 7) << pad("1st-ord", 8) << pad("steps lost", 12) << pad("interrupts", 11)
      << pad("detect", 9) << pad("restart", 10) << pad("quarantined", 12) << "orchestrate's gain\n";
  for (const auto& p : r.policies) {
    std::vector<double> useful, hours, ettr, bound, first, lost, interrupts, quarantined, detect,
        restart;
    for (const auto& m : p.metrics) {
      useful.push_back(m.useful_flops / kEflop);
      hours.push_back(m.useful_gpu_hours);
      ettr.push_back(m.ettr);
      bound.push_back(m.bound_ettr);
      first.push_back(m.first_order_bound);
      lost.push_back(static_cast<double>(m.steps_lost));
      interrupts.push_back(m.interruptions);
      quarantined.push_back(m.nodes_quarantined);
      if (m.median_detect_s) detect.push_back(*m.median_detect_s);
      if (m.median_restart_s) restart.push_back(*m.median_restart_s);
    }
    const Interval u = mean_interval(useful);
    std::string gain = "-";
    if (auto g = r.gain_over.find(p.policy); g != r.gain_over.end()) {
      gain = fixed(g->second.mean, 2) + "x";
      if (g->second.half_width > 0) gain += " +/- " + fixed(g->second.half_width, 2);
    }
    out << pad(p.policy, 18)
        << pad(amount(u.mean) + (u.half_width > 0 ? " +/- " + amount(u.half_width) : ""), 28)
        << pad(grouped(mean_interval(hours).mean), 10) << pad(fixed(mean_interval(ettr).mean, 3), 7)
        << pad(fixed(mean_interval(bound).mean, 3), 7)
        << pad(fixed(mean_interval(first).mean, 3), 8) << pad(grouped(mean_interval(lost).mean), 12)
        << pad(fixed(mean_interval(interrupts).mean, 1), 11) << pad(duration(median(detect)), 9)
        << pad(duration(median(restart)), 10) << pad(fixed(mean_interval(quarantined).mean, 1), 12)
        << gain << "\n";
  }
  // Interruptions by cause, over every seed, and where the productive hours were spent.
  out << "\n";
  for (const auto& p : r.policies) {
    std::map<std::string, int> causes;
    std::map<std::string, double> hours;
    std::map<std::string, int> seeds_mostly_on;  // the cluster each seed spent most hours on
    for (const auto& m : p.metrics) {
      for (const auto& [c, n] : m.by_cause) causes[c] += n;
      for (const auto& [c, h] : m.productive_h_on) hours[c] += h;
      const auto most =
          std::max_element(m.productive_h_on.begin(), m.productive_h_on.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      if (most != m.productive_h_on.end()) ++seeds_mostly_on[most->first];
    }
    out << p.policy << ": interruptions by cause:";
    if (causes.empty()) out << " none";
    for (const auto& [c, n] : causes) out << " " << c << " " << n << ";";
    out << " productive hours by cluster:";
    for (const auto& [c, h] : hours) out << " " << c << " " << grouped(h) << ";";
    out << " seeds mostly on:";
    for (const auto& [c, n] : seeds_mostly_on) out << " " << c << " " << n << ";";
    out << "\n";
  }
  // What the GPUs cost, where hot spares are held: paid GPU-hours and the useful share of them.
  const bool spares = std::any_of(s.clusters.begin(), s.clusters.end(),
                                  [](const SimCluster& c) { return c.spares > 0; });
  for (const auto& p : r.policies) {
    if (!spares) break;
    std::vector<double> paid, spare, per_paid;
    for (const auto& m : p.metrics) {
      paid.push_back(m.gpu_hours_held + m.spare_gpu_hours);
      spare.push_back(m.spare_gpu_hours);
      per_paid.push_back(m.useful_per_paid);
    }
    out << p.policy << ": GPU-hours paid " << grouped(mean_interval(paid).mean) << " (hot spares "
        << grouped(mean_interval(spare).mean) << "); useful GPU-hours per GPU-hour paid "
        << fixed(mean_interval(per_paid).mean, 3) << "\n";
  }
  // Where orchestrate's recoveries went, as its own rows say (medians over every recovery).
  for (const auto& p : r.policies) {
    std::map<std::string, std::vector<double>> parts;
    for (const auto& run : p.runs) {
      for (const auto& [name, v] : run.recovery_parts) {
        parts[name].insert(parts[name].end(), v.begin(), v.end());
      }
    }
    if (parts.empty()) continue;
    out << p.policy << ": its recoveries by its own rows, medians:";
    for (const char* name : {"detection", "backoff", "placing", "site", "startup"}) {
      out << " " << name << " " << duration(median(parts[name])) << ";";
    }
    out << "\n";
  }
  return out.str();
}

nlohmann::json report_json(const Report& r) {
  const Scenario& s = *r.scenario;
  nlohmann::json j;
  j["scenario"] = s.name;
  j["days"] = s.days;
  j["job"] = {{"name", s.job.name},
              {"nodes", s.job_nodes},
              {"gpus_per_node", s.job_gpus_per_node},
              {"flops_per_step", s.job.flops_per_step},
              {"checkpoint_every", s.job.checkpoint_every},
              {"save_s", s.job.save_s}};
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& p : r.policies) {
    nlohmann::json runs = nlohmann::json::array();
    std::vector<double> useful, flops;
    for (std::size_t i = 0; i < p.runs.size(); ++i) {
      const JobMetrics& m = p.metrics[i];
      useful.push_back(m.useful_gpu_hours);
      flops.push_back(m.useful_flops);
      nlohmann::json run = {{"seed", p.runs[i].seed},
                            {"ettr", m.ettr},
                            {"bound", m.bound_ettr},
                            {"first_order_bound", m.first_order_bound},
                            {"useful_gpu_hours", m.useful_gpu_hours},
                            {"useful_flops", m.useful_flops},
                            {"gpu_hours_held", m.gpu_hours_held},
                            {"spare_gpu_hours", m.spare_gpu_hours},
                            {"useful_per_paid", m.useful_per_paid},
                            {"kept_steps", m.kept_steps},
                            {"steps_lost", m.steps_lost},
                            {"interruptions", m.interruptions},
                            {"interruptions_by_cause", m.by_cause},
                            {"productive_hours_by_cluster", m.productive_h_on},
                            {"nodes_quarantined", m.nodes_quarantined},
                            {"completed", m.completed},
                            {"events", p.runs[i].events},
                            {"events_refused", p.runs[i].events_refused},
                            {"wall_s", p.runs[i].wall_s}};
      run["median_detection_s"] =
          m.median_detect_s ? nlohmann::json(*m.median_detect_s) : nlohmann::json();
      run["median_restart_s"] =
          m.median_restart_s ? nlohmann::json(*m.median_restart_s) : nlohmann::json();
      run["mean_restart_s"] =
          m.mean_restart_s ? nlohmann::json(*m.mean_restart_s) : nlohmann::json();
      run["runs"] = m.runs;
      if (!p.runs[i].recovery_parts.empty()) {
        nlohmann::json parts = nlohmann::json::object();
        for (const auto& [name, v] : p.runs[i].recovery_parts) {
          const auto m50 = median(v);
          parts[name + "_median_s"] = m50 ? nlohmann::json(*m50) : nlohmann::json();
        }
        run["recovery_parts"] = std::move(parts);
      }
      runs.push_back(std::move(run));
    }
    const Interval u = mean_interval(useful);
    const Interval f = mean_interval(flops);
    nlohmann::json entry = {{"policy", p.policy},
                            {"runs", std::move(runs)},
                            {"useful_flops_mean", f.mean},
                            {"useful_flops_ci95", f.half_width},
                            {"useful_gpu_hours_mean", u.mean},
                            {"useful_gpu_hours_ci95", u.half_width}};
    if (auto g = r.gain_over.find(p.policy); g != r.gain_over.end()) {
      entry["orchestrate_gain_mean"] = g->second.mean;
      entry["orchestrate_gain_ci95"] = g->second.half_width;
    }
    policies.push_back(std::move(entry));
  }
  j["policies"] = std::move(policies);
  return j;
}

std::string render_svg(const Report& r) {
  // One bar per policy: mean useful EFLOP, the 95% interval as a whisker, each seed a dot.
  const double width = 640, height = 360, left = 90, bottom = 300, top = 40;
  double most = 0;
  for (const auto& p : r.policies) {
    for (const auto& m : p.metrics) most = std::max(most, m.useful_flops / kEflop);
  }
  most = most > 0 ? most * 1.1 : 1;
  auto y = [&](double v) { return bottom - (bottom - top) * v / most; };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" "
      << "font-size=\"12\">\n";
  svg << "<text x=\"" << left << "\" y=\"24\" font-size=\"14\">" << r.scenario->name
      << ": useful EFLOP per policy (mean, 95% CI, one dot per seed)</text>\n";
  svg << "<line x1=\"" << left << "\" y1=\"" << bottom << "\" x2=\"" << width - 20 << "\" y2=\""
      << bottom << "\" stroke=\"#333\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double v = most * i / 4;
    svg << "<text x=\"" << left - 8 << "\" y=\"" << fixed(y(v) + 4, 1) << "\" text-anchor=\"end\">"
        << amount(v) << "</text>\n";
    svg << "<line x1=\"" << left << "\" y1=\"" << fixed(y(v), 1) << "\" x2=\"" << width - 20
        << "\" y2=\"" << fixed(y(v), 1) << "\" stroke=\"#ddd\"/>\n";
  }
  const double slot =
      (width - 20 - left) / static_cast<double>(std::max<std::size_t>(r.policies.size(), 1));
  static const char* colours[] = {"#2b7a78", "#c05746", "#6a5acd", "#888"};
  for (std::size_t i = 0; i < r.policies.size(); ++i) {
    const PolicyResult& p = r.policies[i];
    std::vector<double> useful;
    for (const auto& m : p.metrics) useful.push_back(m.useful_flops / kEflop);
    const Interval u = mean_interval(useful);
    const double x = left + slot * static_cast<double>(i) + slot * 0.2;
    const double w = slot * 0.6;
    svg << "<rect x=\"" << fixed(x, 1) << "\" y=\"" << fixed(y(u.mean), 1) << "\" width=\""
        << fixed(w, 1) << "\" height=\"" << fixed(bottom - y(u.mean), 1) << "\" fill=\""
        << colours[std::min<std::size_t>(i, 3)] << "\" fill-opacity=\"0.8\"><title>" << p.policy
        << ": " << amount(u.mean) << " +/- " << amount(u.half_width) << " EFLOP</title></rect>\n";
    const double cx = x + w / 2;
    svg << "<line x1=\"" << fixed(cx, 1) << "\" y1=\"" << fixed(y(u.mean - u.half_width), 1)
        << "\" x2=\"" << fixed(cx, 1) << "\" y2=\"" << fixed(y(u.mean + u.half_width), 1)
        << "\" stroke=\"#000\" stroke-width=\"2\"/>\n";
    for (std::size_t k = 0; k < useful.size(); ++k) {
      const double dx =
          w * 0.8 * (static_cast<double>(k) + 0.5) / static_cast<double>(useful.size());
      svg << "<circle cx=\"" << fixed(x + w * 0.1 + dx, 1) << "\" cy=\"" << fixed(y(useful[k]), 1)
          << "\" r=\"2.5\" fill=\"#111\"/>\n";
    }
    svg << "<text x=\"" << fixed(cx, 1) << "\" y=\"" << bottom + 18 << "\" text-anchor=\"middle\">"
        << p.policy << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace orch::sim
