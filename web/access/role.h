#pragma once
// Who may do what: the four roles of an API token, ordered so that each may do everything the
// ones before it may (docs/security.md).
//   viewer   - read everything
//   user     - submit jobs, and cancel the jobs they submitted
//   operator - any job, datasets, transfers, burn-in, support tickets
//   admin    - clusters, outages, nodes, tokens, the audit log
// `open` is the role of a route that needs no token (the health probe); `attempt` the role of
// the route an attempt's agents push their records to (no token holds it, it allows nothing
// else).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "web/route_table.h"  // enum class Role

namespace orch {

const char* to_string(Role role);
// "viewer" | "user" | "operator" | "admin"; nullopt for anything else ("open" included: no
// token can be given it).
std::optional<Role> parse_role(std::string_view text);
// Whether a token of role `held` may use a route that needs `needed`.
bool role_allows(Role held, Role needed);

// The caller of a request once its token is known: the token's name (the user), role, and the
// teams it may submit for (a `user`'s; the first is its default; operators and admins act for
// any team).
struct Identity {
  std::string user;
  Role role = Role::viewer;
  std::vector<std::string> teams;
};

}  // namespace orch
