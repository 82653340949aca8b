// `orchestrate ticket open|update|close|list|show` (health_commands.h): the support record with
// each cluster's provider.
#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/health_commands.h"
#include "cli/output_table.h"

namespace orch {

using nlohmann::json;

namespace {

std::string ticket_path(std::int64_t id) {
  return "/api/v1/tickets/" + std::to_string(id);
}

// "1.5 h" between two times in ms; "-" when either is missing.
std::string hours_between(const json& from, const json& to) {
  if (!from.is_number() || !to.is_number()) return "-";
  return decimal(json((to.get<double>() - from.get<double>()) / 3'600'000.0), 1) + " h";
}

void render_ticket(const json& t, std::ostream& out) {
  out << "Ticket " << field(t, "id") << " with " << field(t, "cluster") << "'s provider ("
      << field(t, "state") << "): " << text(t, "summary") << '\n';
  if (!member(t, "nodes").empty()) {
    std::string nodes;
    for (const auto& n : member(t, "nodes")) nodes += (nodes.empty() ? "" : ", ") + cell(n);
    out << "  nodes: " << nodes << '\n';
  }
  if (!text(t, "incident").empty()) out << "  incident: " << text(t, "incident") << '\n';
  out << "  opened " << timestamp(member(t, "opened_ms")) << "; first response "
      << hours_between(member(t, "opened_ms"), member(t, "first_response_ms")) << "; resolved "
      << hours_between(member(t, "opened_ms"), member(t, "resolved_ms")) << '\n';
  Table table({"TIME", "KIND", "TEXT"});
  for (const auto& n : items(t, "history")) {
    table.add_row({timestamp(member(n, "at_ms")), field(n, "kind"), text(n, "text")});
  }
  if (!table.empty()) table.print(out);
}

}  // namespace

int run_ticket_open(const ClientOptions& o, const std::string& cluster, const std::string& summary,
                    const std::vector<std::string>& nodes, const std::string& incident,
                    std::ostream& out, std::ostream& err) {
  json request = {{"cluster", cluster}, {"summary", summary}, {"nodes", nodes}};
  if (!incident.empty()) request["incident"] = incident;
  json body;
  if (int rc = call_json(o, "POST", "/api/v1/tickets", body, err, request.dump()); rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(body, out);
  } else {
    out << "opened ticket " << field(body, "id") << " with " << cluster << "'s provider\n";
  }
  return kExitOk;
}

int run_ticket_update(const ClientOptions& o, std::int64_t id, const std::string& text_,
                      bool from_provider, std::ostream& out, std::ostream& err) {
  json request = {{"text", text_}, {"from_provider", from_provider}};
  json body;
  if (int rc = call_json(o, "POST", ticket_path(id) + "/updates", body, err, request.dump());
      rc != kExitOk) {
    return rc;
  }
  as_json(o) ? print_json(body, out) : render_ticket(body, out);
  return kExitOk;
}

int run_ticket_close(const ClientOptions& o, std::int64_t id, const std::string& resolution,
                     std::ostream& out, std::ostream& err) {
  const std::string request = resolution.empty() ? "" : json{{"resolution", resolution}}.dump();
  json body;
  if (int rc = call_json(o, "POST", ticket_path(id) + "/close", body, err, request);
      rc != kExitOk) {
    return rc;
  }
  as_json(o) ? print_json(body, out) : render_ticket(body, out);
  return kExitOk;
}

int run_ticket_list(const ClientOptions& o, const std::string& cluster, const std::string& state,
                    std::ostream& out, std::ostream& err) {
  const std::string target =
      with_query("/api/v1/tickets", {{"cluster", cluster}, {"state", state}});
  json body;
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  Table table({"ID", "CLUSTER", "STATE", "OPENED", "RESPONSE", "RESOLVED", "SUMMARY"});
  for (const auto& t : items(body, "tickets")) {
    table.add_row(
        {field(t, "id"), field(t, "cluster"), field(t, "state"), timestamp(member(t, "opened_ms")),
         hours_between(member(t, "opened_ms"), member(t, "first_response_ms")),
         hours_between(member(t, "opened_ms"), member(t, "resolved_ms")), text(t, "summary")});
  }
  if (table.empty()) {
    out << "no tickets\n";
  } else {
    table.print(out);
  }
  return kExitOk;
}

int run_ticket_show(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err) {
  json body;
  if (int rc = call_json(o, "GET", ticket_path(id), body, err); rc != kExitOk) return rc;
  as_json(o) ? print_json(body, out) : render_ticket(body, out);
  return kExitOk;
}

}  // namespace orch
