// `orchestrate cluster burn-in` and `cluster probes` (health_commands.h).
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/health_commands.h"
#include "cli/health_render.h"
#include "cli/output_table.h"

namespace orch {
namespace {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

// The cluster's admission in GET /clusters, or "" when the list does not name it.
std::string admission_of(const json& clusters, const std::string& name) {
  const json& list = clusters.is_array() ? clusters : member(clusters, "clusters");
  if (!list.is_array()) return "";
  for (const auto& c : list) {
    if (member(c, "name") == name && member(c, "admission").is_string()) {
      return member(c, "admission").get<std::string>();
    }
  }
  return "";
}

// Polls until the cluster is admitted (active); kExitOk then, else the exit code.
int wait_admitted(const ClientOptions& o, const std::string& name, int timeout_s,
                  std::ostream& err) {
  const auto deadline = SteadyClock::now() + std::chrono::seconds(timeout_s);
  bool told_retry = false;
  std::string admission;
  for (;;) {
    json clusters;
    if (int rc = call_json(o, "GET", "/api/v1/clusters", clusters, err); rc != kExitOk) return rc;
    admission = admission_of(clusters, name);
    if (admission == "active") return kExitOk;
    if (admission == "pending" && !told_retry) {
      // The round we started ended without a verdict (the site failed it); the server tries
      // again by itself in a while.
      err << "burn-in round of " << name << " failed; the server retries it shortly\n";
      told_retry = true;
    }
    if (SteadyClock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
  }
  err << "error: cluster " << name << " is still "
      << (admission.empty() ? std::string("not admitted") : admission) << " after " << timeout_s
      << " s; see `orchestrate cluster probes " << name << "`\n";
  return kExitServerError;
}

int print_probes(const ClientOptions& o, const std::string& name, const std::string& node,
                 const json& extra, std::ostream& out, std::ostream& err) {
  std::string target = cluster_path(name) + "/probes?limit=1000";
  if (!node.empty()) target += "&node=" + percent_encode(node);
  json body;
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  if (!node.empty()) {
    as_json(o) ? print_json(body, out) : render_node_probes(body, out);
    return kExitOk;
  }
  json round = latest_round(body);
  if (as_json(o)) {
    json shown = extra.is_object() ? extra : json::object();
    shown["cluster"] = name;
    shown["probes"] = round;
    print_json(shown, out);
  } else {
    render_probe_round(round, out);
  }
  return kExitOk;
}

}  // namespace

int run_cluster_burn_in(const ClientOptions& o, const std::string& name, bool wait, int timeout_s,
                        std::ostream& out, std::ostream& err) {
  json started;
  if (int rc = call_json(o, "POST", cluster_path(name) + "/burn-in", started, err); rc != kExitOk) {
    return rc;
  }
  if (!wait) {
    if (as_json(o)) {
      print_json(started, out);
    } else {
      out << "burn-in of " << name << " started (round " << field(started, "round")
          << "); `orchestrate cluster probes " << name << "` shows the results\n";
    }
    return kExitOk;
  }
  if (int rc = wait_admitted(o, name, timeout_s, err); rc != kExitOk) return rc;
  if (!as_json(o)) out << "cluster " << name << " is active\n";
  return print_probes(o, name, "", json{{"admission", "active"}}, out, err);
}

int run_cluster_probes(const ClientOptions& o, const std::string& name, const std::string& node,
                       std::ostream& out, std::ostream& err) {
  return print_probes(o, name, node, json::object(), out, err);
}

}  // namespace orch
