#include "cli/job_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/output_table.h"
#include "scheduler/model/ettr_text.h"
#include "scheduler/model/score_breakdown.h"

namespace orch {
namespace {

std::string gpus(const nlohmann::json& obj) {
  const auto& nodes = member(obj, "nodes");
  const auto& per = member(obj, "gpus_per_node");
  if (!nodes.is_number_integer() || !per.is_number_integer()) return "-";
  return nodes.dump() + "x" + per.dump();
}

std::string steps(const nlohmann::json& attempt) {
  const auto& first = member(attempt, "first_step");
  const auto& last = member(attempt, "last_step");
  if (first.is_null() && last.is_null()) return "-";
  return cell(first) + ".." + cell(last);
}

// The first few names of a list and how many more: "b-12,b-13,b-14 +5"; "-" when empty.
std::string names(const nlohmann::json& list, std::size_t shown = 3) {
  if (!list.is_array() || list.empty()) return "-";
  std::string out;
  for (std::size_t i = 0; i < list.size() && i < shown; ++i) {
    if (!out.empty()) out += ",";
    out += cell(list[i]);
  }
  if (list.size() > shown) out += " +" + std::to_string(list.size() - shown);
  return out;
}

void line(std::ostream& out, const std::string& label, const std::string& value) {
  out << "  " << label << std::string(label.size() < 17 ? 17 - label.size() : 1, ' ') << value
      << '\n';
}

// The job's MFU flag (a misconfigured model size or peak FLOPs); "" when none.
std::string mfu_flag_of(const nlohmann::json& obj) {
  const nlohmann::json& v = member(obj, "mfu_flag");
  return v.is_string() ? v.get<std::string>() : "";
}

// What the MTBF stands on (issue 45), when it is not mostly measured: ", MTBF mostly prior:
// 0.01 node-hours observed (3 failures) against the prior's 500".
std::string mtbf_evidence(const nlohmann::json& advice) {
  const std::string basis = field(advice, "mtbf_basis");
  if (basis != "prior" && basis != "mostly prior") return "";
  const auto& hours = member(advice, "evidence_node_hours");
  const int digits = hours.is_number() && hours.get<double>() < 10 ? 2 : 0;
  return ", MTBF " + basis + ": " + decimal(hours, digits) + " node-hours observed (" +
         field(advice, "node_failures") + " failures) against the prior's " +
         decimal(member(advice, "prior_node_hours"), 0);
}

// "every 1897 s (~9035 steps) (Young: 60 s checkpoint cost, MTBF 8.3 h on alpha)", or "" when
// the server gave no advice (the job never ran) or no interval (no cost or MTBF known). The
// interval is the exact renewal formula's best; Young's first-order one is named beside it.
std::string checkpoint_advice(const nlohmann::json& advice) {
  const auto& interval = member(advice, "interval_s");
  if (!interval.is_number() || interval.get<double>() <= 0) return "";
  std::string out = "every " + decimal(interval, 0) + " s";
  const auto& steps = member(advice, "interval_steps");
  if (steps.is_number()) out += " (~" + decimal(steps, 0) + " steps)";
  // A save of a small model takes milliseconds: show it rather than "0 s".
  const auto& cost = member(advice, "checkpoint_cost_s");
  const int digits = cost.is_number() && cost.get<double>() < 1 ? 3 : 1;
  const auto& young = member(advice, "young_interval_s");
  out += std::string(young.is_number() ? " (renewal; Young's " + decimal(young, 0) + " s"
                                       : " (Young") +
         ": " + decimal(cost, digits) + " s checkpoint cost, MTBF " +
         decimal(member(advice, "job_mtbf_h"), 1) + " h on " + field(advice, "cluster") + ")";
  // Issue 42: advice that stands on the priors alone is not shown as a fact.
  if (field(advice, "basis") == "prior") out += ", prior (no measurements yet)";
  out += mtbf_evidence(advice);
  return out;
}

// An expected ETTR with three decimals (scheduler/model/ettr_text.h); "-" when there is none.
std::string ettr_text(const nlohmann::json& value) {
  return value.is_number() ? ettr_digits(value.get<double>()) : "-";
}

// "0.912 at 1897 s, 0.905 at 949 s, ...": the planner's expected ETTR around the advice.
std::string ettr_around(const nlohmann::json& advice) {
  std::string out;
  const auto& around = member(advice, "around");
  if (!around.is_array()) return out;
  for (const auto& a : around) {
    if (!out.empty()) out += ", ";
    out += ettr_text(member(a, "ettr")) + " at " + decimal(member(a, "interval_s"), 0) + " s";
  }
  return out;
}

}  // namespace

namespace {

// Hot spares: the recommended count, and each count's cover and GPU-hours a day.
void render_spares(const nlohmann::json& spares, std::ostream& out) {
  const auto& options = member(spares, "options");
  if (!options.is_array() || options.empty()) return;
  out << "\nhot spares: hold " << field(spares, "recommended") << " ("
      << decimal(member(spares, "failures_per_day"), 2)
      << " failures a day; a relaunch onto a spare assumed to take "
      << decimal(member(spares, "hot_restart_s"), 0) << " s)\n";
  Table table({"SPARES", "FAILURES COVERED", "GPU-H SAVED/DAY", "GPU-H PAID/DAY", "NET/DAY"});
  for (const auto& o : options) {
    table.add_row({field(o, "spares"), decimal(member(o, "covered"), 3),
                   decimal(member(o, "gained_gpu_h_per_day"), 0),
                   decimal(member(o, "paid_gpu_h_per_day"), 0),
                   decimal(member(o, "net_gpu_h_per_day"), 0)});
  }
  table.print(out);
}

}  // namespace

void render_plan(const nlohmann::json& job, std::ostream& out) {
  const auto& advice = member(job, "checkpoint_advice");
  const std::string words = checkpoint_advice(advice);
  if (words.empty()) {
    out << "job " << field(job, "id") << ": no advice yet: it needs a save time and an MTBF "
        << "measured on its cluster (it has not run, or not saved, there)\n";
    return;
  }
  out << "job " << field(job, "id") << " (" << field(job, "name") << "): checkpoint " << words
      << "\n";
  out << "restart " << decimal(member(advice, "restart_s"), 0) << " s, expected MFU "
      << decimal(member(advice, "expected_mfu"), 3) << "\n\n";
  Table table({"INTERVAL S", "STEPS", "EXPECTED ETTR", "FIRST ORDER", ""});
  const double best =
      member(advice, "interval_s").is_number() ? member(advice, "interval_s").get<double>() : 0;
  const auto& around = member(advice, "around");
  if (around.is_array()) {
    for (const auto& a : around) {
      const auto& interval = member(a, "interval_s");
      const bool at_best = interval.is_number() && std::abs(interval.get<double>() - best) < 0.5;
      table.add_row({decimal(interval, 0), field(a, "interval_steps"), ettr_text(member(a, "ettr")),
                     ettr_text(member(a, "ettr_first_order")), at_best ? "<- best interval" : ""});
    }
  }
  table.print(out);
  render_spares(member(advice, "spares"), out);
}

namespace {

// A cluster's hot spares: "1/1 ready, 8.0 GPU-h idle"; "-" for a cluster that holds none.
std::string spares_cell(const nlohmann::json& spares) {
  const auto& wanted = member(spares, "wanted");
  if (!wanted.is_number_integer() || wanted.get<int>() == 0) return "-";
  return field(spares, "ready") + "/" + field(spares, "wanted") + " ready, " +
         decimal(member(spares, "gpu_hours_idle"), 1) + " GPU-h idle";
}

}  // namespace

void render_clusters(const nlohmann::json& body, std::ostream& out) {
  Table table({"NAME", "PROVIDER", "HEALTH", "ADMISSION", "NODES", "HEALTHY", "GPUS USED", "OTHERS",
               "SPARES", "ACCELERATOR", "PEAK TFLOPS", "MESSAGE"});
  for (const auto& c : items(body, "clusters")) {
    const auto& used = member(c, "gpus_used");
    const auto& total = member(c, "gpus_total");
    table.add_row({field(c, "name"), field(c, "provider"), field(c, "health"),
                   field(c, "admission"), field(c, "nodes") + "x" + field(c, "gpus_per_node"),
                   member(c, "nodes_healthy").is_null() ? "-" : field(c, "nodes_healthy"),
                   cell(used) + "/" + cell(total), field(c, "gpus_foreign"),
                   spares_cell(member(c, "spares")), field(c, "accelerator"),
                   field(c, "peak_tflops"), field(c, "message") == "-" ? "" : field(c, "message")});
  }
  if (table.empty()) {
    out << "no clusters\n";
    return;
  }
  table.print(out);
}

std::string job_title(const nlohmann::json& job) {
  const std::string point = text(job, "sweep_point");
  return field(job, "name") + (point.empty() ? "" : " \u00b7 " + point);
}

namespace {

// "100 (hero)", "0"; "-" from a server that does not say.
std::string priority_cell(const nlohmann::json& job) {
  const std::string klass = text(job, "priority_class");
  return field(job, "priority") + (klass.empty() ? "" : " (" + klass + ")");
}

// "-" for an empty string, so that a column never looks shifted.
std::string or_dash(const std::string& value) {
  return value.empty() ? "-" : value;
}

}  // namespace

void render_jobs(const nlohmann::json& body, std::ostream& out, bool wide) {
  std::vector<std::string> headers = {"ID",       "NAME", "STATE", "CLUSTER", "GPUS",
                                      "ATTEMPTS", "STEP", "MFU",   "ETTR"};
  if (wide) headers.insert(headers.end(), {"PRIORITY", "TEAM", "GROUP", "OWNER"});
  headers.push_back("REASON");
  Table table(std::move(headers));
  for (const auto& j : items(body, "jobs")) {
    // Wide: the total and the shape, "8 (2x4)".
    const std::string size = wide && member(j, "gpus").is_number_integer()
                                 ? field(j, "gpus") + " (" + gpus(j) + ")"
                                 : gpus(j);
    std::vector<std::string> row = {field(j, "id"),
                                    job_title(j),
                                    field(j, "state"),
                                    field(j, "cluster"),
                                    size,
                                    field(j, "attempts"),
                                    field(j, "step"),
                                    percent(member(j, "mfu")),
                                    percent(member(j, "ettr"))};
    if (wide) {
      row.insert(row.end(), {priority_cell(j), or_dash(text(j, "team")), or_dash(text(j, "group")),
                             or_dash(text(j, "owner"))});
    }
    row.push_back(text(j, "reason"));
    table.add_row(std::move(row));
  }
  if (table.empty()) {
    out << "no jobs\n";
    return;
  }
  table.print(out);
}

namespace {

// What each failed attempt printed (its error_excerpt: the classifier's evidence, a hint, the
// failing task's last lines), indented under the attempt; nothing when none failed.
void render_excerpts(const nlohmann::json& attempts, std::ostream& out) {
  bool heading = false;
  for (const auto& a : items(attempts, "attempts")) {
    const std::string excerpt = text(a, "error_excerpt");
    if (excerpt.empty()) continue;
    if (!heading) out << "\nWhat failed\n";
    heading = true;
    out << "  attempt " << field(a, "no") << " (" << field(a, "cause") << "):\n";
    std::size_t at = 0;
    while (at <= excerpt.size()) {
      const std::size_t end = std::min(excerpt.find('\n', at), excerpt.size());
      out << "    " << excerpt.substr(at, end - at) << '\n';
      at = end + 1;
    }
  }
}

}  // namespace

void render_attempts(const nlohmann::json& attempts, std::ostream& out) {
  Table table({"NO", "CLUSTER", "SITE JOB", "NODES", "FAILED ON", "STATE", "CAUSE", "STEPS",
               "RESUMED FROM", "MFU", "STEPS LOST", "STARTED"});
  for (const auto& a : items(attempts, "attempts")) {
    const std::string site_job = text(a, "site_job_id");
    const std::string failed = text(a, "failed_node");
    // Issue 42: stopped before it launched; why is said below the table.
    const bool launched = text(a, "not_launched").empty();
    table.add_row({field(a, "no"), field(a, "cluster"), site_job.empty() ? "-" : site_job,
                   names(member(a, "nodes"), 8), failed.empty() ? "-" : failed, field(a, "state"),
                   launched ? field(a, "cause") : "not launched", steps(a),
                   field(member(a, "resumed_from"), "step"), percent(member(a, "mfu")),
                   field(a, "steps_lost"), timestamp(member(a, "started_ms"))});
  }
  if (table.empty()) {
    out << "no attempts yet\n";
    return;
  }
  table.print(out);
  for (const auto& a : items(attempts, "attempts")) {
    const std::string why = text(a, "not_launched");
    if (!why.empty()) out << "  attempt " << field(a, "no") << " not launched: " << why << '\n';
  }
  // Where each recovery's seconds went (the server's breakdown, scheduler/health).
  bool heading = false;
  for (const auto& a : items(attempts, "attempts")) {
    const auto& r = member(a, "recovery");
    if (!r.is_object()) continue;
    if (!heading) out << "\nRecovery (last sign of life to first progress line)\n";
    heading = true;
    out << "  attempt " << field(a, "no") << " after " << text(r, "after") << ": "
        << text(r, "text") << '\n';
  }
  render_excerpts(attempts, out);
}

void render_cluster_nodes(const nlohmann::json& body, std::ostream& out) {
  const auto& nodes = items(body, "nodes");
  std::size_t unhealthy = 0;
  Table table({"NODE", "GPUS", "HEALTH", "STATE", "FAILURES", "NEXT_FAILURE", "REASON"});
  for (const auto& n : nodes) {
    const bool healthy = member(n, "healthy").is_boolean() && member(n, "healthy").get<bool>();
    unhealthy += healthy ? 0 : 1;
    table.add_row({field(n, "name"), field(n, "gpus"), healthy ? "healthy" : "unhealthy",
                   field(n, "state"),
                   field(n, "failures") + "/" + field(n, "failures_to_quarantine"),
                   text(n, "next_failure"), text(n, "reason")});
  }
  out << "Cluster " << field(body, "cluster") << ": " << nodes.size() << " node(s), " << unhealthy
      << " unhealthy\n";
  if (table.empty()) {
    out << "no nodes reported yet\n";
  } else {
    table.print(out);
  }
  out << "\nRecent node events\n";
  Table events({"TIME", "NODE", "KIND", "JOB", "ATTEMPT", "MESSAGE"});
  for (const auto& e : items(body, "events")) {
    events.add_row({timestamp(member(e, "at_ms")), field(e, "node"), field(e, "kind"),
                    field(e, "job_id"), field(e, "attempt_no"), text(e, "message")});
  }
  if (events.empty()) {
    out << "no node events\n";
    return;
  }
  events.print(out);
}

void render_events(const nlohmann::json& events, std::size_t last_n, std::ostream& out) {
  const auto& list = items(events, "events");
  Table table({"TIME", "KIND", "ATTEMPT", "MESSAGE"});
  const std::size_t start = list.size() > last_n ? list.size() - last_n : 0;
  for (std::size_t i = start; i < list.size(); ++i) {
    const auto& e = list[i];
    table.add_row({timestamp(member(e, "at_ms")), field(e, "kind"), field(e, "attempt_no"),
                   field(e, "message")});
  }
  if (table.empty()) {
    out << "no events\n";
    return;
  }
  table.print(out);
}

void render_job(const nlohmann::json& job, const nlohmann::json& attempts,
                const nlohmann::json& events, std::ostream& out) {
  out << "Job " << field(job, "id") << ": " << job_title(job) << '\n';
  line(out, "state", field(job, "state"));
  const std::string reason =
      member(job, "reason").is_string() ? member(job, "reason").get<std::string>() : "";
  if (!reason.empty()) line(out, "reason", reason);
  if (member(job, "priority").is_number()) line(out, "priority", priority_cell(job));
  for (const char* who : {"owner", "team", "group"}) {
    const nlohmann::json& v = member(job, who);
    if (v.is_string() && !v.get<std::string>().empty()) line(out, who, v.get<std::string>());
  }
  line(out, "cluster", field(job, "cluster"));
  line(out, "size", field(job, "nodes") + " nodes x " + field(job, "gpus_per_node") + " GPUs");
  line(out, "attempts",
       field(job, "attempts") + " (infra restarts " + field(job, "infra_restarts") +
           ", user restarts " + field(job, "user_restarts") + ")");
  line(out, "step", field(job, "step"));
  line(out, "MFU", percent(member(job, "mfu")));
  if (auto flag = mfu_flag_of(job); !flag.empty()) line(out, "MFU flag", flag);
  line(out, "ETTR", percent(member(job, "ettr")));
  line(out, "steps lost", field(job, "steps_lost"));
  const auto& checkpoint = member(job, "last_checkpoint");
  line(out, "last checkpoint",
       checkpoint.is_object()
           ? "step " + field(checkpoint, "step") + " at " + field(checkpoint, "path")
           : "-");
  if (auto advice = checkpoint_advice(member(job, "checkpoint_advice")); !advice.empty()) {
    line(out, "checkpoint advice", advice);
    if (auto around = ettr_around(member(job, "checkpoint_advice")); !around.empty()) {
      line(out, "expected ETTR", around);
    }
  }
  line(out, "created", timestamp(member(job, "created_ms")));
  line(out, "updated", timestamp(member(job, "updated_ms")));
  out << "\nAttempts\n";
  render_attempts(attempts, out);
  out << "\nEvents (last 10)\n";
  render_events(events, 10, out);
}

namespace {

// Per cluster, every filter that refused it and the preemptions the decision considered there,
// taken or not, and why (issue 42); only clusters with more to say than the table's reason.
void render_explain_details(const nlohmann::json& explain, std::ostream& out) {
  bool header = false;
  for (const auto& c : items(explain, "clusters")) {
    const auto& refused = items(c, "refused_by");
    const auto& preemptions = items(c, "preemptions");
    const auto& more = member(c, "preemptions_more");
    if (refused.size() < 2 && preemptions.empty()) continue;
    if (!header) out << "\nper cluster:\n";
    header = true;
    out << "  " << field(c, "cluster") << '\n';
    for (const auto& r : refused) {
      out << "    refused by " << field(r, "filter") << ": " << field(r, "reason") << '\n';
    }
    for (const auto& p : preemptions) {
      const std::string team = field(p, "team");
      const bool taken = member(p, "taken").is_boolean() && member(p, "taken").get<bool>();
      out << "    preemption of job " << field(p, "job_id") << " " << field(p, "job_name") << " ("
          << (team.empty() || team == "-" ? "" : "team " + team + ", ") << field(p, "gpus")
          << " GPU(s)): " << (taken ? "taken" : "not taken") << "; " << field(p, "why") << '\n';
    }
    if (more.is_number_integer() && more.get<int>() > 0) {
      out << "    and " << more.get<int>() << " more preemption(s) considered\n";
    }
  }
}

// Issue 45: where the fleet has prices, each cluster's goodput, price and useful FLOP per unit of
// money as columns of their own ("-" where none).
bool any_price(const nlohmann::json& explain) {
  const auto& clusters = items(explain, "clusters");
  return std::any_of(clusters.begin(), clusters.end(),
                     [](const auto& c) { return member(c, "price_per_gpu_hour").is_number(); });
}

std::vector<std::string> cost_cells(const nlohmann::json& c) {
  const auto& flops = member(c, "goodput_flops");
  const auto& price = member(c, "price_per_gpu_hour");
  const auto& per_cost = member(c, "goodput_per_cost");
  const std::string currency = field(c, "currency");
  char buf[48] = "-";
  if (price.is_number()) {
    std::snprintf(buf, sizeof buf, "%.2f %s%s", price.get<double>(), currency.c_str(),
                  member(c, "price_assumed") == true ? " (assumed)" : "");
  }
  return {flops.is_number() ? flop_text(flops.get<double>()) : "-", buf,
          per_cost.is_number() ? flop_text(per_cost.get<double>(), " per " + currency) : "-"};
}

}  // namespace

void render_explain(const nlohmann::json& explain, std::ostream& out) {
  out << "Job " << field(explain, "job_id") << ", evaluated "
      << timestamp(member(explain, "evaluated_at_ms")) << '\n';
  const auto& chosen = member(explain, "chosen");
  out << "chosen: " << (chosen.is_string() ? chosen.get<std::string>() : "none") << '\n';
  const std::string klass = field(explain, "priority_class");
  out << "priority: " << field(explain, "priority")
      << (klass.empty() || klass == "-" ? "" : " (" + klass + ")") << '\n';
  if (member(explain, "objective").is_string())
    out << "objective: " << field(explain, "objective") << '\n';
  out << '\n';
  if (auto flag = mfu_flag_of(explain); !flag.empty()) {
    out << "MFU not counted (placement, the cluster's MFU, the scorecards): " << flag << "\n\n";
  }
  if (!items(explain, "preemption").empty()) {
    out << "preemption and backfill:\n";
    for (const auto& p : items(explain, "preemption")) {
      out << "  " << timestamp(member(p, "at_ms")) << "  " << field(p, "kind") << ": "
          << field(p, "message") << '\n';
    }
    out << '\n';
  }
  const bool priced = any_price(explain);
  Table table(priced ? std::vector<std::string>{"CLUSTER", "FEASIBLE", "SCORE", "GOODPUT",
                                                "PRICE/GPU-H", "PER UNIT OF MONEY", "REASON"}
                     : std::vector<std::string>{"CLUSTER", "FEASIBLE", "SCORE", "REASON"});
  for (const auto& c : items(explain, "clusters")) {
    std::vector<std::string> row = {field(c, "cluster"), field(c, "feasible"), field(c, "score")};
    if (priced) {
      for (auto& cell : cost_cells(c)) row.push_back(std::move(cell));
    }
    row.push_back(member(c, "reason").is_string() ? member(c, "reason").get<std::string>() : "");
    table.add_row(std::move(row));
  }
  if (table.empty()) {
    out << "no clusters were evaluated\n";
    return;
  }
  table.print(out);
  render_explain_details(explain, out);
}

}  // namespace orch
