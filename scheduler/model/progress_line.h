#pragma once
// The progress protocol: how a training job tells orchestrate what it is doing. A job prints
// ordinary lines to stdout; a line that starts with the prefix "@orchestrate " carries one JSON
// object. Everything else is ordinary log output and is left alone. See docs/progress-protocol.md.
//
//   @orchestrate {"event":"progress","step":120,"tokens":8192,"step_time_s":0.21}
//   @orchestrate {"event":"checkpoint_start","step":120,"path":"/ckpt/job-7/step-120.ckpt"}
//   @orchestrate {"event":"checkpoint","step":120,"path":"/ckpt/job-7/step-120.ckpt"}
//
// progress:   step (>= 0, required), tokens processed in this step (>= 0, optional),
//             step_time_s (> 0, optional; wall time of this step), loss (optional),
//             ranks (optional; per-rank step times, each {rank >= 0, node non-empty,
//             step_time_s > 0}, for straggler detection).
// checkpoint: step (>= 0, required), path (non-empty, required), save_time_s (optional),
//             tier ("shared", the default, or "local"), node (non-empty; required with
//             "local": the node whose own disk holds the copy, $ORCH_NODE_NAME).
// checkpoint_start: step (>= 0, required), path (non-empty, required): a save of that step to
//             that path begins now (issue 43: the agent times it and raises io_stall when it
//             runs too long; the scheduler itself takes nothing from it).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/progress_prefix.h"

namespace orch {

// One rank's wall time for the step, as a multi-node job may report it for straggler detection.
struct RankStepTime {
  int rank = 0;
  std::string node;  // the node the rank runs on
  double step_time_s = 0;
};

struct ProgressReport {
  std::int64_t step = 0;
  std::optional<std::int64_t> tokens;
  std::optional<double> step_time_s;
  std::optional<double> loss;
  std::vector<RankStepTime> ranks;  // optional "ranks":[{"rank":0,"node":"n1","step_time_s":0.2}]
};

// Where a checkpoint's copy lies (issue 38, tiered checkpoints): on the job's checkpoint
// directory at the site ($ORCH_CHECKPOINT_DIR, the shared filesystem), or on one node's own disk
// ($ORCH_LOCAL_CHECKPOINT_DIR), saved fast and drained to the shared tier in the background.
enum class CheckpointTier { shared, local };

struct CheckpointReport {
  std::int64_t step = 0;
  std::string path;
  std::optional<double> save_time_s;
  CheckpointTier tier = CheckpointTier::shared;
  std::string node;  // tier local: the node whose disk holds it
};

// A save begins (its checkpoint line follows when it is complete and durable).
struct CheckpointStartReport {
  std::int64_t step = 0;
  std::string path;
};

using ProgressLine = std::variant<ProgressReport, CheckpointReport, CheckpointStartReport>;

// nullopt: not a protocol line (no prefix). An error: the prefix is there but the rest is not a
// valid report; the message says which field is wrong so the job's author can fix it.
std::optional<Result<ProgressLine>> parse_progress_line(std::string_view line);

// The line a job prints (used by the toy trainer and tests so both sides share one format).
std::string format_progress_line(const ProgressLine& report);

}  // namespace orch
