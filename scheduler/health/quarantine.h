#pragma once
// Quarantine rules for one node, pure: the brain feeds them the node's ledger and the clock.
//   active --(>= failures_to_quarantine failures within window)--> quarantined
//   quarantined --(passing probe after cooldown)--> active
//   quarantined --(the retire_after-th quarantine)--> retired (stays out until released by hand)
// A failed burn-in probe quarantines at once. `orchestrate node quarantine|release` overrides.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/model/node_state.h"

namespace orch {

struct QuarantinePolicy {
  int failures_to_quarantine = 2;
  Millis window_ms = 7LL * 24 * 3600 * 1000;
  Millis cooldown_ms = 3600 * 1000;  // before a quarantined node may be probed for release
  int retire_after = 3;              // the third quarantine retires the node
};

// Ledger kinds that count as a failure implicated in the node: node-unhealthy (site says down or
// drained), node-failure (NODE_FAIL under a job), gpu-error (Xid/ECC in a job's log),
// probe-failed, mfu-outlier (straggler or MFU drop naming it), hang (a hung one-node attempt),
// gpu-fault (the agent's live watch saw a fatal Xid or an uncorrectable ECC rise, issue 43).
bool is_failure_kind(std::string_view kind);
const std::vector<std::string>& failure_kinds();  // the same kinds, as a list

struct NodeHealth {
  NodeState state = NodeState::active;
  int quarantines = 0;  // how many times it has been quarantined, ever
  std::optional<Millis> quarantined_at_ms;
};

struct NodeDecision {
  std::optional<NodeState> to;  // nullopt: no change
  std::string reason;           // for the ledger and the CLI, e.g. "2 failures in 7 days"
};

// After a failure was added to the ledger. failure_times_ms: every failure entry of this node
// (any order), the new one included; those within [now - window_ms, now] count. Only an active
// node moves: a quarantined one stays as it is, a retired one stays retired.
NodeDecision after_failure(const NodeHealth& node, const std::vector<Millis>& failure_times_ms,
                           Millis now, const QuarantinePolicy& policy);
// A fatal GPU fault the live watch saw on the node (ledger kind gpu-fault, issue 43): the GPU
// needs a reset or service, so an active node is put out at once, whatever its count
// (quarantined, or retired on its retire_after-th quarantine); its release probe brings it back.
// A quarantined or retired node does not move.
bool quarantines_at_once(std::string_view kind);
NodeDecision after_fatal_fault(const NodeHealth& node, const std::string& why,
                               const QuarantinePolicy& policy);
// After a burn-in or release probe: a failed probe quarantines an active node (or retires it,
// on its retire_after-th quarantine); a passed one releases a quarantined node once the
// cooldown is over; a failed one keeps it quarantined. A retired node does not move.
NodeDecision after_probe(const NodeHealth& node, bool passed, const std::string& why, Millis now,
                         const QuarantinePolicy& policy);
// What a node's standing means for its next failure, as `node list` shows it: `counted` is the
// number of incidents (incidents.h) within the window since it last came back.
struct NodeOutlook {
  int failures = 0;  // counted
  int needed = 0;    // failures within the window that quarantine it
  std::string next;  // "the next failure quarantines it", "2 more failures within 7 days ..."
};
NodeOutlook node_outlook(const NodeHealth& node, int counted, const QuarantinePolicy& policy);

// Whether a quarantined node is due for its release probe: cooldown_ms after quarantined_at_ms
// (at once when that is unknown). Never for an active or a retired node.
bool release_probe_due(const NodeHealth& node, Millis now, const QuarantinePolicy& policy);

}  // namespace orch
