#include "web/access/route_roles.h"

namespace orch {

const std::vector<RouteRole>& route_roles() {
  static const std::vector<RouteRole> table = {
      {"GET /healthz", Role::open},
      // The status page's files: no data in them (the page reads the API with a token).
      {"GET /", Role::open},
      {"GET /ui/{file}", Role::open},
      // The API's description: no data in it.
      {"GET /api/v1/openapi.json", Role::open},
      // Reads: anyone with a token.
      {"GET /api/v1/clusters", Role::viewer},
      {"GET /api/v1/clusters/{name}/nodes", Role::viewer},
      {"GET /api/v1/clusters/{name}/probes", Role::viewer},
      {"GET /api/v1/nodes", Role::viewer},
      {"GET /api/v1/jobs", Role::viewer},
      {"GET /api/v1/jobs/{id}", Role::viewer},
      {"GET /api/v1/jobs/{id}/attempts", Role::viewer},
      {"GET /api/v1/jobs/{id}/events", Role::viewer},
      {"GET /api/v1/jobs/{id}/explain", Role::viewer},
      {"GET /api/v1/jobs/{id}/logs", Role::viewer},
      {"GET /api/v1/jobs/{id}/mfu", Role::viewer},
      {"GET /api/v1/jobs/{id}/checkpoints", Role::viewer},
      {"GET /api/v1/reports/providers", Role::viewer},
      {"GET /api/v1/data/datasets", Role::viewer},
      {"GET /api/v1/data/transfers", Role::viewer},
      {"GET /api/v1/data/transfers/{id}", Role::viewer},
      {"GET /api/v1/tickets", Role::viewer},
      {"GET /api/v1/tickets/{id}", Role::viewer},
      {"GET /api/v1/whoami", Role::viewer},
      // Secrets' names and grants (never a value): what a job may name.
      {"GET /api/v1/secrets", Role::viewer},
      {"GET /metrics", Role::viewer},
      // A user runs jobs; the cancel route lets a user cancel only the jobs they submitted.
      {"POST /api/v1/jobs", Role::user},
      {"POST /api/v1/jobs/{id}/cancel", Role::user},
      // An operator runs the fleet's work: data, burn-in, support tickets.
      {"POST /api/v1/data/datasets", Role::operator_},
      {"POST /api/v1/data/replicate", Role::operator_},
      {"POST /api/v1/data/audit", Role::operator_},
      {"POST /api/v1/clusters/{name}/burn-in", Role::operator_},
      {"POST /api/v1/tickets", Role::operator_},
      {"POST /api/v1/tickets/{id}/updates", Role::operator_},
      {"POST /api/v1/tickets/{id}/close", Role::operator_},
      // An admin changes the fleet and who may use it.
      {"POST /api/v1/clusters", Role::admin},
      {"POST /api/v1/clusters/reload", Role::admin},
      {"POST /api/v1/clusters/{name}/outage", Role::admin},
      {"POST /api/v1/clusters/{name}/drain", Role::admin},
      {"POST /api/v1/clusters/{name}/activate", Role::admin},
      {"POST /api/v1/clusters/{name}/retire", Role::admin},
      {"POST /api/v1/clusters/{name}/nodes/{node}/quarantine", Role::admin},
      {"POST /api/v1/clusters/{name}/nodes/{node}/release", Role::admin},
      {"GET /api/v1/tokens", Role::admin},
      {"POST /api/v1/tokens", Role::admin},
      {"POST /api/v1/tokens/{name}/revoke", Role::admin},
      {"GET /api/v1/audit", Role::admin},
      {"PUT /api/v1/secrets/{name}", Role::admin},
      {"POST /api/v1/secrets/{name}/grant", Role::admin},
      {"DELETE /api/v1/secrets/{name}", Role::admin},
  };
  return table;
}

std::optional<Role> role_for_route(std::string_view route) {
  for (const RouteRole& r : route_roles()) {
    if (r.route == route) return r.role;
  }
  return std::nullopt;
}

}  // namespace orch
