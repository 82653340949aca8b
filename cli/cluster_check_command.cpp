// `orchestrate cluster check NAME` (health_commands.h): the cluster's preflight, one line per
// check, run by the server on the site now.
#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/health_commands.h"
#include "cli/output_table.h"

namespace orch {
namespace {

using nlohmann::json;

// "<name>  ok|FAILED|skipped  <why>", the name padded as scheduler/model/preflight.h does.
std::string check_line(const json& check) {
  std::string name =
      member(check, "name").is_string() ? member(check, "name").get<std::string>() : "?";
  if (name.size() < 16) name.resize(16, ' ');
  const bool skipped = member(check, "skipped") == true;
  const bool ok = member(check, "ok") == true;
  const char* verdict = skipped ? "skipped" : ok ? "ok     " : "FAILED ";
  const std::string why =
      member(check, "why").is_string() ? member(check, "why").get<std::string>() : "";
  return name + " " + verdict + " " + why;
}

}  // namespace

int run_cluster_check(const ClientOptions& o, const std::string& name, std::ostream& out,
                      std::ostream& err) {
  json body;
  if (int rc = call_json(o, "POST", cluster_path(name) + "/check", body, err); rc != kExitOk) {
    return rc;
  }
  const bool ok = member(body, "ok") == true;
  if (as_json(o)) {
    print_json(body, out);
    return ok ? kExitOk : kExitServerError;
  }
  const json& checks = member(body, "checks");
  if (checks.is_array()) {
    for (const auto& c : checks) out << check_line(c) << "\n";
  }
  if (ok) {
    out << "cluster " << name << " passed every check: it takes jobs\n";
    return kExitOk;
  }
  out << "cluster " << name << " takes no jobs until every check passes; fix what FAILED says "
      << "and run `orchestrate cluster check " << name << "` again\n";
  return kExitServerError;
}

}  // namespace orch
