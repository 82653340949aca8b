#pragma once
// What the brain believes about a site's reachability.
//   healthy     -> answered the last poll
//   unreachable -> stopped answering; its jobs are left alone for the cluster's grace
//   down        -> silent for longer than the grace; its attempts were declared lost

#include <optional>
#include <string_view>

namespace orch {

enum class SiteHealth { healthy, unreachable, down };

inline std::string_view to_string(SiteHealth h) {
  switch (h) {
    case SiteHealth::healthy:
      return "healthy";
    case SiteHealth::unreachable:
      return "unreachable";
    case SiteHealth::down:
      return "down";
  }
  return "?";
}

inline std::optional<SiteHealth> parse_site_health(std::string_view s) {
  if (s == "healthy") return SiteHealth::healthy;
  if (s == "unreachable") return SiteHealth::unreachable;
  if (s == "down") return SiteHealth::down;
  return std::nullopt;
}

}  // namespace orch
