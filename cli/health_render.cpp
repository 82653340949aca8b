// Tables of nodes, probe rounds and provider scorecards (health_render.h).
#include "cli/health_render.h"

#include <cstdio>
#include <string>

#include "cli/output_table.h"

namespace orch {
namespace {

using nlohmann::json;

bool passed(const json& probe) {
  return member(probe, "passed").is_boolean() && member(probe, "passed").get<bool>();
}

std::vector<std::string> probe_cells(const json& p) {
  return {field(p, "node"),
          passed(p) ? "yes" : "no",
          decimal(member(p, "gemm_gflops"), 1),
          decimal(member(p, "write_mb_s"), 1),
          decimal(member(p, "read_mb_s"), 1),
          text(p, "reason")};
}

const std::vector<std::string> kProbeHeaders = {"NODE",       "PASSED",    "GFLOPS",
                                                "WRITE_MB/S", "READ_MB/S", "REASON"};

}  // namespace

void render_nodes(const json& body, std::ostream& out) {
  // FAILURES: incidents counted in the quarantine window / the number that quarantines.
  Table table({"CLUSTER", "NODE", "STATE", "GPUS", "HEALTHY", "FAILURES", "QUARANTINES",
               "NEXT_FAILURE", "REASON"});
  for (const auto& n : items(body, "nodes")) {
    const bool healthy = member(n, "healthy").is_boolean() && member(n, "healthy").get<bool>();
    // Why it is out of service comes first; for an active node, the site's word when unhealthy.
    std::string reason = text(n, "state") != "active" ? text(n, "state_reason") : "";
    if (reason.empty() && !healthy) reason = text(n, "reason");
    table.add_row({field(n, "cluster"), field(n, "name"), field(n, "state"), field(n, "gpus"),
                   field(n, "healthy"),
                   field(n, "failures") + "/" + field(n, "failures_to_quarantine"),
                   field(n, "quarantines"), text(n, "next_failure"), reason});
  }
  if (table.empty()) {
    out << "no nodes\n";
    return;
  }
  table.print(out);
}

void render_node(const json& n, std::ostream& out) {
  const bool lemon = member(n, "lemon").is_boolean() && member(n, "lemon").get<bool>();
  const bool count_rule =
      member(n, "count_rule").is_boolean() && member(n, "count_rule").get<bool>();
  out << "node " << field(n, "name") << " of " << field(n, "cluster") << ": " << field(n, "state");
  if (!text(n, "state_reason").empty()) out << " (" << text(n, "state_reason") << ")";
  out << "\nGPUs " << field(n, "gpus") << ", healthy " << field(n, "healthy") << ", quarantined "
      << field(n, "quarantines") << " time(s)\n";
  // The evidence, as the rule reads it (docs/health.md, "Lemons judged by rate").
  out << "rate: " << text(n, "rate_evidence") << (lemon ? "; a lemon: retired" : "; no lemon")
      << "\n";
  out << "count rule: " << field(n, "failures") << " of " << field(n, "failures_to_quarantine")
      << " failures within " << field(n, "window_h") << " h"
      << (count_rule ? "; " + text(n, "next_failure")
                     : std::string("; off at its cluster's rate (that many is luck there)"))
      << "\n";
}

json latest_round(const json& body) {
  json out = json::array();
  const auto& probes = items(body, "probes");
  if (probes.empty()) return out;
  const json round = member(probes[0], "round");
  for (const auto& p : probes) {
    if (member(p, "round") == round) out.push_back(p);
  }
  return out;
}

void render_probe_round(const json& probes, std::ostream& out) {
  if (!probes.is_array() || probes.empty()) {
    out << "no probes yet\n";
    return;
  }
  std::size_t ok = 0;
  Table table(kProbeHeaders);
  // Newest first from the server; a round reads better in node order.
  for (auto it = probes.rbegin(); it != probes.rend(); ++it) {
    ok += passed(*it) ? 1 : 0;
    table.add_row(probe_cells(*it));
  }
  out << "Round " << field(probes[0], "round") << " at " << timestamp(member(probes[0], "at_ms"))
      << ": " << ok << " of " << probes.size() << " node(s) passed\n";
  table.print(out);
}

void render_node_probes(const json& probes, std::ostream& out) {
  std::vector<std::string> headers = {"TIME", "ROUND"};
  headers.insert(headers.end(), kProbeHeaders.begin(), kProbeHeaders.end());
  Table table(headers);
  for (const auto& p : items(probes, "probes")) {
    std::vector<std::string> row = {timestamp(member(p, "at_ms")), field(p, "round")};
    auto cells = probe_cells(p);
    row.insert(row.end(), cells.begin(), cells.end());
    table.add_row(std::move(row));
  }
  if (table.empty()) {
    out << "no probes yet\n";
    return;
  }
  table.print(out);
}

namespace {

// Days late (negative: early), "+" when it is still awaited: "3.5", "-1", "12.0+"; "-" without a
// promise.
std::string delivery(const json& card) {
  std::string out = decimal(member(card, "delivery_delay_days"), 1);
  const json& awaiting = member(card, "awaiting_delivery");
  if (out != "-" && awaiting.is_boolean() && awaiting.get<bool>()) out += "+";
  return out;
}

// Money to the cent ("1234.50"), GPU-hours to the hundredth; "-" for a value that is not a
// number.
std::string cents(const json& value) {
  if (!value.is_number()) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", value.get<double>());
  return text;
}

}  // namespace

void render_cost_report(const json& report, std::ostream& out) {
  const std::string by = text(report, "by");
  std::string currency = text(report, "currency");
  out << "Cost by " << by << " from " << timestamp(member(report, "from_ms")) << " to "
      << timestamp(member(report, "now_ms"));
  out << (currency.empty() ? std::string(" (no cluster has a price)") : " in " + currency) << '\n';
  // LOST: every GPU-hour that kept no step: REDONE (steps the next attempt made again), RESTART
  // (start-up before the first progress line), QUEUED (GPUs held before it ran), FAILED (the
  // rest of an attempt that kept no step). COMMITTED/IDLE: a contract's spend and what it left.
  Table table({by == "job" ? "JOB" : "NAME", "GPU_H", "USEFUL_GPU_H", "LOST_GPU_H", "MONEY",
               "USEFUL", "LOST", "REDONE", "RESTART", "QUEUED", "FAILED", "COMMITTED", "IDLE"});
  auto add = [&](const std::string& name, const json& row) {
    const json& h = member(row, "gpu_hours");
    const json& m = member(row, "money");
    table.add_row(
        {name, cents(member(h, "total")), cents(member(h, "useful")), cents(member(h, "lost")),
         cents(member(m, "total")), cents(member(m, "useful")), cents(member(m, "lost")),
         cents(member(m, "redone")), cents(member(m, "restart")), cents(member(m, "queued")),
         cents(member(m, "failed")), cents(member(row, "committed")), cents(member(row, "idle"))});
  };
  for (const auto& r : items(report, "rows")) {
    std::string name = text(r, "key");
    if (by == "job") name += " " + text(r, "name");
    add(name.empty() ? "(no team)" : name, r);
  }
  if (table.empty()) {
    out << "no cost in this span\n";
    return;
  }
  add("TOTAL", member(report, "total"));
  table.print(out);
}

void render_scorecards(const json& report, std::ostream& out) {
  out << "Provider scorecards from " << timestamp(member(report, "window_start_ms")) << " to "
      << timestamp(member(report, "now_ms")) << '\n';
  // DETECT_S: last sign of life to orchestrate's verdict; RECOVER_S: verdict to the next attempt
  // running. Each median/p95. PARTS_P50_S: the recovery's parts, medians: backoff/placing/the
  // site's queue and launch/the job's own start to its first progress line. TICKETS: open now /
  // opened in the window; RESPONSE_H, RESOLVE_H: median hours from opening to the provider's first
  // response and to resolution. MFU: its attempts' work over their time (the JSON's median_mfu).
  // IO_STALLS: checkpoint saves that ran past their bound (docs/health.md "I/O stalls").
  Table table({"NAME", "KIND", "AVAIL", "INTERRUPTS/1kGPUh", "MTBF_H", "DETECT_P50/P95_S",
               "RECOVER_P50/P95_S", "PARTS_P50_S", "MFU", "CKPT_P95_S", "IO_STALLS", "QUARANTINED",
               "GPU_H", "TICKETS", "RESPONSE_H", "RESOLVE_H", "DELIVERY_D", "MONEY",
               "USEFUL_GPUH/1K"});
  for (const auto& c : items(report, "cards")) {
    table.add_row(
        {field(c, "name"), field(c, "kind"), percent(member(c, "availability")),
         decimal(member(c, "interruptions_per_1k_gpu_h"), 2), decimal(member(c, "node_mtbf_h"), 1),
         decimal(member(c, "detection_median_s"), 1) + "/" +
             decimal(member(c, "detection_p95_s"), 1),
         decimal(member(c, "recovery_median_s"), 1) + "/" + decimal(member(c, "recovery_p95_s"), 1),
         decimal(member(c, "backoff_median_s"), 1) + "/" +
             decimal(member(c, "placing_median_s"), 1) + "/" +
             decimal(member(c, "site_median_s"), 1) + "/" +
             decimal(member(c, "startup_median_s"), 1),
         percent(member(c, "median_mfu")), decimal(member(c, "checkpoint_save_p95_s"), 1),
         field(c, "io_stalls"), field(c, "quarantined_nodes") + "/" + field(c, "nodes"),
         decimal(member(c, "gpu_hours"), 1), field(c, "open_tickets") + "/" + field(c, "tickets"),
         decimal(member(c, "ticket_response_median_h"), 1),
         decimal(member(c, "ticket_resolution_median_h"), 1), delivery(c),
         cents(member(member(member(c, "cost"), "money"), "total")),
         decimal(member(member(c, "cost"), "useful_gpu_hours_per_1k"), 1)});
  }
  if (table.empty()) {
    out << "no clusters\n";
    return;
  }
  table.print(out);
}

}  // namespace orch
