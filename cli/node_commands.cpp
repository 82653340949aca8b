// `orchestrate node list|show|quarantine|release` (health_commands.h).
#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/health_commands.h"
#include "cli/health_render.h"
#include "cli/output_table.h"

namespace orch {

using nlohmann::json;

int run_node_list(const ClientOptions& o, const std::string& cluster, const std::string& state,
                  std::ostream& out, std::ostream& err) {
  const std::string target = with_query("/api/v1/nodes", {{"cluster", cluster}, {"state", state}});
  json body;
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  as_json(o) ? print_json(body, out) : render_nodes(body, out);
  return kExitOk;
}

int run_node_show(const ClientOptions& o, const std::string& cluster, const std::string& node,
                  std::ostream& out, std::ostream& err) {
  const std::string target = with_query("/api/v1/nodes", {{"cluster", cluster}});
  json body;
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  for (const auto& n : items(body, "nodes")) {
    if (text(n, "name") != node) continue;
    as_json(o) ? print_json(n, out) : render_node(n, out);
    return kExitOk;
  }
  err << "error: cluster " << cluster << " has no node \"" << node
      << "\" (orchestrate node list --cluster " << cluster << " lists them)\n";
  return kExitServerError;
}

int run_node_set_state(const ClientOptions& o, const std::string& cluster, const std::string& node,
                       bool quarantine, const std::string& reason, std::ostream& out,
                       std::ostream& err) {
  const std::string target = cluster_path(cluster) + "/nodes/" + percent_encode(node) +
                             (quarantine ? "/quarantine" : "/release");
  const std::string request = reason.empty() ? "" : json{{"reason", reason}}.dump();
  json body;
  if (int rc = call_json(o, "POST", target, body, err, request); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
  } else if (quarantine) {
    out << "node " << node << " of " << cluster << " is " << field(body, "state")
        << ": no new work is placed on it until it is released\n";
  } else {
    out << "node " << node << " of " << cluster << " is " << field(body, "state")
        << " and may take work again\n";
  }
  return kExitOk;
}

}  // namespace orch
