// `orchestrate token ...` and `orchestrate audit` (access_commands.h).
#include "cli/access_commands.h"

#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/output_table.h"

namespace orch {

using nlohmann::json;

int run_token_create(const ClientOptions& o, const std::string& name, const std::string& role,
                     const std::vector<std::string>& teams, std::ostream& out, std::ostream& err) {
  json body;
  const std::string request = json{{"name", name}, {"role", role}, {"teams", teams}}.dump();
  if (int rc = call_json(o, "POST", "/api/v1/tokens", body, err, request); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  out << field(body, "token") << '\n';
  err << "token for " << field(body, "name") << " (role " << field(body, "role")
      << "): shown once, the server keeps only its hash. Give it to " << field(body, "name")
      << " to put in ORCH_TOKEN or ~/.config/orchestrate/token (mode 600).\n";
  return kExitOk;
}

int run_token_list(const ClientOptions& o, std::ostream& out, std::ostream& err) {
  json body;
  if (int rc = call_json(o, "GET", "/api/v1/tokens", body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  Table t({"NAME", "ROLE", "TEAMS", "STATE", "CREATED", "BY", "REVOKED"});
  for (const auto& row : member(body, "tokens")) {
    std::string teams;
    for (const auto& team : member(row, "teams")) {
      if (team.is_string()) teams += (teams.empty() ? "" : ",") + team.get<std::string>();
    }
    t.add_row({field(row, "name"), field(row, "role"), teams.empty() ? "-" : teams,
               field(row, "state"), timestamp(member(row, "created_ms")), field(row, "created_by"),
               timestamp(member(row, "revoked_ms"))});
  }
  t.print(out);
  return kExitOk;
}

int run_token_revoke(const ClientOptions& o, const std::string& name, std::ostream& out,
                     std::ostream& err) {
  json body;
  const std::string target = "/api/v1/tokens/" + percent_encode(name) + "/revoke";
  if (int rc = call_json(o, "POST", target, body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
  } else {
    out << "revoked the token of " << field(body, "name") << " (role " << field(body, "role")
        << "); requests with it are refused from now on\n";
  }
  return kExitOk;
}

int run_audit(const ClientOptions& o, int limit, const std::string& before, std::ostream& out,
              std::ostream& err) {
  const std::string target = with_query(
      "/api/v1/audit", {{"limit", limit > 0 ? std::to_string(limit) : ""}, {"before", before}});
  json body;
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  // COUNT: the requests a row stands for (refusals in floods are written once a minute).
  Table t({"ID", "WHEN", "USER", "ROLE", "METHOD", "TARGET", "STATUS", "RESULT", "COUNT", "FROM"});
  for (const auto& row : member(body, "entries")) {
    t.add_row({field(row, "id"), timestamp(member(row, "at_ms")), field(row, "user"),
               field(row, "role"), field(row, "method"), field(row, "target"), field(row, "status"),
               field(row, "result"), field(row, "count"), field(row, "remote")});
  }
  t.print(out);
  if (const json& next = member(body, "next"); next.is_string()) {
    out << "older entries: orchestrate audit --before " << next.get<std::string>() << '\n';
  }
  return kExitOk;
}

}  // namespace orch
