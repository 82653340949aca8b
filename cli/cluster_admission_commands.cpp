// `orchestrate cluster add|drain|activate|retire|reload` (health_commands.h).
#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/health_commands.h"
#include "cli/output_table.h"

namespace orch {

using nlohmann::json;

int run_cluster_set_admission(const ClientOptions& o, const std::string& name,
                              const std::string& verb, const std::string& reason, std::ostream& out,
                              std::ostream& err) {
  const std::string request = reason.empty() ? "" : json{{"reason", reason}}.dump();
  json body;
  if (int rc = call_json(o, "POST", cluster_path(name) + "/" + verb, body, err, request);
      rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  const std::string state = field(body, "admission");
  out << "cluster " << name << " is " << state;
  if (state == "draining") {
    out << ": no new work; running jobs finish or move at their next checkpoint\n";
  } else if (state == "retired") {
    out << ": its running jobs are moved now, and it takes no work again\n";
  } else {
    out << " and takes new work\n";
  }
  return kExitOk;
}

int run_cluster_add(const ClientOptions& o, const std::string& file, std::ostream& out,
                    std::ostream& err) {
  json body;
  if (int rc = post_file(o, "/api/v1/clusters", file, body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
  } else {
    out << text(body, "message") << '\n';
  }
  return kExitOk;
}

int run_cluster_reload(const ClientOptions& o, std::ostream& out, std::ostream& err) {
  json body;
  if (int rc = call_json(o, "POST", "/api/v1/clusters/reload", body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
  } else {
    out << text(body, "message") << '\n';
  }
  return kExitOk;
}

}  // namespace orch
