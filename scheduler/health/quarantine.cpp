// Quarantine rules for one node (quarantine.h): when a node's failures put it out of service,
// when a probe lets it back, and when it is out for good.
#include "scheduler/health/quarantine.h"

#include <algorithm>
#include <array>

namespace orch {
namespace {

// "7 days", "1 day", "12 hours", "30 minutes", "45 seconds": the window as a person says it.
std::string describe_duration(Millis ms) {
  struct Unit {
    Millis ms;
    const char* name;
  };
  static constexpr std::array<Unit, 4> units = {{{24LL * 3600 * 1000, "day"},
                                                 {3600LL * 1000, "hour"},
                                                 {60LL * 1000, "minute"},
                                                 {1000, "second"}}};
  for (const auto& u : units) {
    if (ms >= u.ms && ms % u.ms == 0) {
      Millis n = ms / u.ms;
      return std::to_string(n) + " " + u.name + (n == 1 ? "" : "s");
    }
  }
  return std::to_string(ms) + " ms";
}

std::string ordinal(int n) {
  const int tens = n % 100;
  const char* suffix = "th";
  if (tens < 11 || tens > 13) {
    switch (n % 10) {
      case 1:
        suffix = "st";
        break;
      case 2:
        suffix = "nd";
        break;
      case 3:
        suffix = "rd";
        break;
      default:
        break;
    }
  }
  return std::to_string(n) + suffix;
}

// The state an active node moves to when something quarantines it: retired on the
// retire_after-th quarantine, quarantined before that.
NodeDecision put_out(const NodeHealth& node, const std::string& why,
                     const QuarantinePolicy& policy) {
  const int nth = node.quarantines + 1;
  if (policy.retire_after > 0 && nth >= policy.retire_after) {
    return {NodeState::retired,
            why + "; " + ordinal(nth) + " quarantine, retired until a person releases it"};
  }
  return {NodeState::quarantined, why};
}

}  // namespace

const std::vector<std::string>& failure_kinds() {
  static const std::vector<std::string> kinds = {"node-unhealthy", "node-failure", "gpu-error",
                                                 "probe-failed",   "mfu-outlier",  "hang",
                                                 "gpu-fault"};
  return kinds;
}

bool is_failure_kind(std::string_view kind) {
  const auto& kinds = failure_kinds();
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

NodeDecision after_failure(const NodeHealth& node, const std::vector<Millis>& failure_times_ms,
                           Millis now, const QuarantinePolicy& policy) {
  if (node.state == NodeState::retired) return {std::nullopt, "retired; only a person releases it"};
  if (node.state == NodeState::quarantined) return {std::nullopt, "already quarantined"};
  const Millis from = now - policy.window_ms;
  const auto recent = std::count_if(failure_times_ms.begin(), failure_times_ms.end(),
                                    [&](Millis t) { return t >= from && t <= now; });
  const std::string counted = std::to_string(recent) + " failure" + (recent == 1 ? "" : "s") +
                              " within " + describe_duration(policy.window_ms);
  if (recent < policy.failures_to_quarantine) return {std::nullopt, counted};
  return put_out(node, counted, policy);
}

bool quarantines_at_once(std::string_view kind) {
  return kind == "gpu-fault";
}

NodeDecision after_fatal_fault(const NodeHealth& node, const std::string& why,
                               const QuarantinePolicy& policy) {
  if (node.state != NodeState::active) return {std::nullopt, "already out of service"};
  return put_out(node, "fatal GPU fault: " + why, policy);
}

NodeDecision after_probe(const NodeHealth& node, bool passed, const std::string& why, Millis now,
                         const QuarantinePolicy& policy) {
  const std::string detail = why.empty() ? "" : ": " + why;
  switch (node.state) {
    case NodeState::retired:
      return {std::nullopt, "retired; only a person releases it"};
    case NodeState::active:
      if (passed) return {std::nullopt, "probe passed" + detail};
      return put_out(node, "probe failed" + detail, policy);
    case NodeState::quarantined:
      if (!passed) return {std::nullopt, "release probe failed" + detail};
      if (!release_probe_due(node, now, policy)) {
        return {std::nullopt, "probe passed but the cooldown of " +
                                  describe_duration(policy.cooldown_ms) + " is not over"};
      }
      return {NodeState::active, "release probe passed" + detail};
  }
  return {};
}

NodeOutlook node_outlook(const NodeHealth& node, int counted, const QuarantinePolicy& policy) {
  NodeOutlook o{counted, policy.failures_to_quarantine, ""};
  switch (node.state) {
    case NodeState::retired:
      o.next = "retired: only a person releases it";
      return o;
    case NodeState::quarantined:
      o.next = "quarantined: a passing release probe after the cooldown of " +
               describe_duration(policy.cooldown_ms) + " returns it";
      return o;
    case NodeState::active:
      break;
  }
  const int more = std::max(1, policy.failures_to_quarantine - counted);
  if (more > 1) {
    o.next = std::to_string(more) + " more failures within " + describe_duration(policy.window_ms) +
             " quarantine it";
    return o;
  }
  const NodeDecision out = put_out(node, "", policy);
  o.next = out.to == NodeState::retired ? "the next failure retires it (its " +
                                              ordinal(node.quarantines + 1) + " quarantine)"
                                        : std::string("the next failure quarantines it");
  return o;
}

bool release_probe_due(const NodeHealth& node, Millis now, const QuarantinePolicy& policy) {
  if (node.state != NodeState::quarantined) return false;
  // A quarantine with no recorded start cannot be timed; waiting for ever would strand it.
  if (!node.quarantined_at_ms) return true;
  return now - *node.quarantined_at_ms >= policy.cooldown_ms;
}

}  // namespace orch
