#pragma once
// A node's standing in orchestrate (scheduler/health/quarantine.h has the rules), and a
// cluster's admission (a new cluster is burned in before it gets work).

#include <optional>
#include <string_view>

namespace orch {

enum class NodeState { active, quarantined, retired };

inline std::string_view to_string(NodeState s) {
  switch (s) {
    case NodeState::active:
      return "active";
    case NodeState::quarantined:
      return "quarantined";
    case NodeState::retired:
      return "retired";
  }
  return "?";
}

inline std::optional<NodeState> parse_node_state(std::string_view s) {
  for (NodeState v : {NodeState::active, NodeState::quarantined, NodeState::retired}) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

//   pending_delivery -> pending|active  (ordered with a promised date: once its site first lists
//                                        a node, or a person activates it)
//   pending -> burn_in -> active   (a cluster whose spec asks for burn-in on join)
//   active                         (otherwise, and after any burn-in round ends)
//   active <-> draining            (a person drains it: no new work; running jobs finish or
//                                   move at their next checkpoint; activate undoes it)
//   any -> retired                 (returned to its provider: its jobs move at once; final)
enum class Admission { pending_delivery, pending, burn_in, active, draining, retired };

inline std::string_view to_string(Admission a) {
  switch (a) {
    case Admission::pending_delivery:
      return "pending-delivery";
    case Admission::pending:
      return "pending";
    case Admission::burn_in:
      return "burn-in";
    case Admission::active:
      return "active";
    case Admission::draining:
      return "draining";
    case Admission::retired:
      return "retired";
  }
  return "?";
}

inline std::optional<Admission> parse_admission(std::string_view s) {
  for (Admission v : {Admission::pending_delivery, Admission::pending, Admission::burn_in,
                      Admission::active, Admission::draining, Admission::retired}) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

}  // namespace orch
