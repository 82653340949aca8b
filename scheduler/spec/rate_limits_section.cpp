#include "scheduler/spec/rate_limits_section.h"

#include <string>

namespace orch {
namespace {

using yaml::MapView;

// Far beyond what one server answers: a limit this high is the way to turn one off.
constexpr double kMaxPerSecond = 1'000'000;
constexpr long long kMaxBurst = 1'000'000;

void read_role(const MapView& limits, const std::string& role, RoleRate& out) {
  MapView rate = limits.child(role, "server.rate_limits." + role, {"per_s", "burst"},
                              "a map such as {per_s: 10, burst: 40}");
  rate.read_number("per_s", out.per_s, yaml::NumberRange{0, true, kMaxPerSecond},
                   "the changes a second a caller of this role may make, such as 10");
  rate.read_int("burst", out.burst, 1, kMaxBurst,
                "the changes a caller of this role may make at once, such as 40");
}

}  // namespace

void read_rate_limits(const MapView& server, RateLimits& out) {
  const MapView limits =
      server.child("rate_limits", "server.rate_limits", {"user", "operator", "admin"},
                   "a map such as {user: {per_s: 10, burst: 40}, admin: {per_s: 50, burst: 200}}");
  if (server.reader().failed()) return;
  read_role(limits, "user", out.user);
  read_role(limits, "operator", out.operator_);
  read_role(limits, "admin", out.admin);
}

}  // namespace orch
