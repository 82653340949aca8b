#pragma once
// The one table of who may call each route: every route of the router, as
// "METHOD /pattern", with the least role that may call it. A route the router has and this
// table lacks fails tests/unit/web/access_routes_test.cpp, and the guard answers it 500 rather
// than guess; add the entry in route_roles.cpp when you add a route.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "web/access/role.h"

namespace orch {

struct RouteRole {
  std::string_view route;  // "POST /api/v1/jobs/{id}/cancel"
  Role role;
};

const std::vector<RouteRole>& route_roles();
std::optional<Role> role_for_route(std::string_view route);

}  // namespace orch
