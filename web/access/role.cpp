#include "web/access/role.h"

namespace orch {

const char* to_string(Role role) {
  switch (role) {
    case Role::open:
      return "open";
    case Role::viewer:
      return "viewer";
    case Role::user:
      return "user";
    case Role::operator_:
      return "operator";
    case Role::admin:
      return "admin";
    case Role::attempt:
      return "attempt";
  }
  return "viewer";
}

std::optional<Role> parse_role(std::string_view text) {
  for (Role r : {Role::viewer, Role::user, Role::operator_, Role::admin}) {
    if (text == to_string(r)) return r;
  }
  return std::nullopt;
}

bool role_allows(Role held, Role needed) {
  // An attempt's agent may call its route and nothing else; no token may call that route.
  if (held == Role::attempt || needed == Role::attempt) return held == needed;
  return static_cast<int>(held) >= static_cast<int>(needed);
}

}  // namespace orch
