// `orchestrate data ls|add|replicate|transfers|audit` (data_commands.h).
#include <chrono>
#include <ctime>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/data_commands.h"
#include "cli/data_render.h"
#include "cli/output_table.h"

namespace orch {
namespace {

using nlohmann::json;

// "Every 1 s, at 14:03:12 (Ctrl-C to stop)": the heading of a redrawn table.
std::string watch_heading(int interval_ms) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", &tm);
  return "Every " + decimal(json(interval_ms / 1000.0), 2) + " s, at " + clock +
         " (Ctrl-C to stop)";
}

std::string message(const json& body) {
  const json& m = member(body, "message");
  return m.is_string() ? m.get<std::string>() : "";
}

}  // namespace

int run_data_ls(const ClientOptions& o, std::ostream& out, std::ostream& err) {
  json body;
  if (int rc = call_json(o, "GET", "/api/v1/data/datasets", body, err); rc != kExitOk) return rc;
  as_json(o) ? print_json(body, out) : render_datasets(body, out);
  return kExitOk;
}

int run_data_add(const ClientOptions& o, const std::string& name, const std::string& cluster,
                 const std::string& path, std::ostream& out, std::ostream& err) {
  const std::string request = json{{"name", name}, {"cluster", cluster}, {"path", path}}.dump();
  json body;
  if (int rc = call_json(o, "POST", "/api/v1/data/datasets", body, err, request); rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  const std::string said = message(body);
  out << (said.empty() ? "dataset " + name + " registered at " + cluster + ":" + path : said)
      << '\n';
  return kExitOk;
}

int run_data_replicate(const ClientOptions& o, const std::string& dataset, std::int64_t job_id,
                       const std::string& to, std::ostream& out, std::ostream& err) {
  json request = {{"to", to}};
  if (job_id > 0) {
    request["job"] = job_id;
  } else {
    request["dataset"] = dataset;
  }
  json body;
  if (int rc = call_json(o, "POST", "/api/v1/data/replicate", body, err, request.dump());
      rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  const std::string said = message(body);
  if (!said.empty()) out << said << '\n';
  const json& transfer = member(body, "transfer");
  if (transfer.is_number()) {
    out << "transfer " << cell(transfer)
        << " started; `orchestrate data transfers --watch` shows its progress\n";
  } else if (said.empty()) {
    out << "nothing to copy\n";
  }
  return kExitOk;
}

int run_data_transfers(const ClientOptions& o, const TransfersOptions& t, std::ostream& out,
                       std::ostream& err) {
  const std::string target = with_query(
      "/api/v1/data/transfers", {{"all", t.all ? "true" : ""},
                                 {"limit", t.limit > 0 ? std::to_string(t.limit) : std::string()},
                                 {"cursor", t.cursor}});
  const int interval_ms = t.interval_ms > 0 ? t.interval_ms : 1000;
  for (int round = 1;; ++round) {
    json body;
    if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
    if (as_json(o)) {
      // Watching: one document per line, so that a reader can take them one by one.
      if (t.watch) {
        out << body.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
      } else {
        print_json(body, out);
      }
    } else {
      if (t.watch && t.terminal) {
        out << "\x1b[H\x1b[2J" << watch_heading(interval_ms) << "\n\n";
      } else if (round > 1) {
        out << '\n';
      }
      render_transfers(body, t.all, out);
    }
    out.flush();
    if (!t.watch || !any_transfer_active(body)) {
      if (const json next = member(body, "next"); next.is_string() && !as_json(o)) {
        err << "more transfers: orchestrate data transfers" << (t.all ? " --all" : "")
            << " --cursor " << next.get<std::string>() << '\n';
      }
      return kExitOk;
    }
    if (t.max_rounds > 0 && round >= t.max_rounds) return kExitOk;
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  }
}

int run_data_audit(const ClientOptions& o, const std::string& cluster, std::ostream& out,
                   std::ostream& err) {
  const std::string request = cluster.empty() ? "" : json{{"cluster", cluster}}.dump();
  json body;
  if (int rc = call_json(o, "POST", "/api/v1/data/audit", body, err, request); rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  const std::string said = message(body);
  out << (said.empty() ? "audit started" : said)
      << "; `orchestrate data ls` and `orchestrate checkpoint ls JOB` show what it finds\n";
  return kExitOk;
}

}  // namespace orch
