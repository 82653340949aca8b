#pragma once
// Plain records as stored. The store reads and writes these; the brain decides with them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/clock.h"
#include "scheduler/model/job_state.h"
#include "scheduler/model/site_health.h"
#include "scheduler/spec/job_spec.h"

namespace orch {

using JobId = std::int64_t;
using AttemptId = std::int64_t;

struct ClusterRow {
  std::string name;
  SiteHealth health = SiteHealth::healthy;
  std::optional<Millis> unreachable_since_ms;
  std::string message;
};

// A node as its site last reported it. Issue 4's ledger adds failures and quarantine.
struct NodeRow {
  std::string cluster;
  std::string name;
  int gpus = 0;
  bool healthy = true;
  std::string reason;  // the site's words when not healthy
  Millis seen_ms = 0;  // when the site last listed it
};

// One entry of a cluster's node ledger: what happened to a node, when, and (for a failure
// under a job) which attempt it hit. Kinds: node-unhealthy, node-healthy, node-failure.
struct NodeEventRow {
  std::int64_t id = 0;
  std::string cluster;
  std::string node;
  Millis at_ms = 0;
  std::string kind;
  std::string message;
  std::optional<std::int64_t> job_id;
  std::optional<int> attempt_no;
};

struct JobRow {
  JobId id = 0;
  std::string name;
  JobState state = JobState::pending;
  JobSpec spec;
  int infra_restarts = 0;
  int user_restarts = 0;
  std::optional<Millis> next_attempt_ms;  // earliest time of the next placement (backoff)
  std::string reason;                     // why it waits or failed, for people
  Millis created_ms = 0;
  Millis updated_ms = 0;
};

struct AttemptRow {
  AttemptId id = 0;
  JobId job_id = 0;
  int no = 0;  // 1, 2, ... per job
  std::string cluster;
  std::string token;
  AttemptState state = AttemptState::launching;
  ExitCause cause = ExitCause::none;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string site_job_id;
  std::vector<std::string> nodes;
  int gpus = 0;
  bool cancel_requested = false;
  bool launch_done = false;  // the site confirmed the launch (or adopted it)
  std::optional<std::int64_t> resumed_from_step;
  std::string resumed_from_path;
  Millis started_ms = 0;
  std::optional<Millis> ended_ms;
  std::optional<std::int64_t> first_step;
  std::optional<std::int64_t> last_step;
  double tokens_total = 0;     // tokens over steps that reported them with a step time
  double step_time_total = 0;  // seconds over those same steps
  std::optional<double> mfu;
  std::int64_t steps_lost = 0;  // steps re-done by the next attempt
  // The site has confirmed that nothing of this attempt runs any more (it reported it exited or
  // unknown). An attempt the brain ended on its own (site silent past its grace) stays unsettled,
  // and is still watched, until then: if its site comes back and still runs it, it is stopped.
  bool site_done = false;
};

struct CheckpointRow {
  std::int64_t id = 0;
  JobId job_id = 0;
  AttemptId attempt_id = 0;
  std::int64_t step = 0;
  std::string path;
  std::optional<double> save_time_s;
  Millis at_ms = 0;
};

struct EventRow {
  std::int64_t id = 0;
  std::optional<JobId> job_id;
  std::optional<int> attempt_no;
  Millis at_ms = 0;
  std::string kind;
  std::string message;
};

enum class ActionKind { launch, cancel };

struct OutboxRow {
  std::int64_t id = 0;
  std::string cluster;
  ActionKind kind = ActionKind::launch;
  std::string token;
  nlohmann::json payload;  // launch: the LaunchRequest as JSON
  Millis created_ms = 0;
  std::optional<Millis> done_ms;
};

struct PlacementVerdictRow {
  JobId job_id = 0;
  std::string cluster;
  bool feasible = false;
  std::string reason;
  std::optional<double> score;
  bool chosen = false;
  Millis at_ms = 0;
};

struct ProgressSample {
  AttemptId attempt_id = 0;
  std::int64_t step = 0;
  std::optional<std::int64_t> tokens;
  std::optional<double> step_time_s;
  std::optional<double> mfu;
  Millis at_ms = 0;
};

}  // namespace orch
