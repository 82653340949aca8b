#pragma once
// Everything the brain reacts to. API commands come from REST/CLI, observations and action
// results from site workers, ticks from the clock. The brain handles one at a time.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "scheduler/cluster_port.h"
#include "scheduler/model/node_state.h"
#include "scheduler/model/progress_line.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

struct SubmitJob {
  JobSpec spec;
};

struct CancelJob {
  std::int64_t job_id = 0;
};

// A site worker executed (or adopted, after a restart) a launch from the outbox.
struct LaunchCompleted {
  std::int64_t outbox_id = 0;
  std::string token;
  Result<LaunchResult> result = LaunchResult{};
  bool adopted = false;  // found already running by its token: launched before a crash
};

struct CancelCompleted {
  std::int64_t outbox_id = 0;
  std::string token;
  Result<void> result;
};

// What a site worker saw of one attempt in one poll, with the progress lines it printed.
struct AttemptObserved {
  std::string cluster;
  std::string token;
  RunPhase phase = RunPhase::unknown;
  std::optional<ExitStatus> exit;
  std::vector<std::string> nodes;
  std::vector<ProgressLine> reports;
  std::vector<std::string> bad_lines;  // protocol lines that did not parse, with the reason
  // When phase == exited: the attempt's last ordinary (non-protocol) output lines, oldest first
  // (at most 64), for the failure classifier's log signatures.
  std::vector<std::string> log_tail;
};

// The site's list of nodes (polled now and then, and whenever it may have changed).
struct InventoryObserved {
  std::string cluster;
  SiteInventory inventory;
};

struct SiteUnreachable {
  std::string cluster;
  std::string message;
};

struct SiteReachable {
  std::string cluster;
};

// A site worker ran a probe action from the outbox (burn-in or a release check).
struct ProbeCompleted {
  std::int64_t outbox_id = 0;
  std::string cluster;
  std::string token;
  Result<std::vector<ProbeResult>> result = std::vector<ProbeResult>{};
};

// `orchestrate cluster burn-in NAME`: probe every node now and judge them.
struct StartBurnIn {
  std::string cluster;
};

// `orchestrate node quarantine|release`: a person overrides the rules.
struct SetNodeState {
  std::string cluster;
  std::string node;
  NodeState to = NodeState::active;
  std::string reason;
};

struct Tick {};

using BrainEvent = std::variant<SubmitJob, CancelJob, LaunchCompleted, CancelCompleted,
                                AttemptObserved, InventoryObserved, SiteUnreachable, SiteReachable,
                                ProbeCompleted, StartBurnIn, SetNodeState, Tick>;

// What a command returns to its caller (REST handler).
struct BrainReply {
  std::int64_t job_id = 0;
  std::string state;
};

}  // namespace orch
