#pragma once
// What a launch must stay within to run at all: the values orchestrate-agent accepts on its
// command line, what one execve can carry, and the environment variables orchestrate sets for
// every attempt. The spec parsers hold job specs and clusters files to these limits, so a spec
// that is accepted is one that can run; the agent includes this header (it is header-only) for
// its own checks, so the two cannot drift apart.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace orch::limits {

// `orchestrate-agent run --hang-after-s`: 0 (never) or at most 30 days; the agent counts
// milliseconds, so a positive value below one millisecond would read as "never".
inline constexpr double kMaxHangAfterS = 30 * 86'400.0;
inline constexpr double kMinPositiveSeconds = 0.001;

// A gang's size (docs/launch-contract.md): ranks are ints everywhere (RANK, WORLD_SIZE), so
// nodes x tasks_per_node must stay far below INT_MAX; these caps are beyond any cluster.
inline constexpr int kMaxNodes = 100'000;
inline constexpr int kMaxTasksPerNode = 1024;

// `orchestrate-agent probe --compute-s` and `--io-bytes` (burn-in).
inline constexpr double kMaxProbeComputeS = 3600.0;
inline constexpr std::int64_t kMaxProbeIoBytes = std::int64_t{1} << 40;

// Any other duration a spec gives (timeouts, intervals, backoff): the brain and the adapters
// turn seconds into 64-bit milliseconds, so anything beyond a year is refused as a typo.
inline constexpr double kMaxDurationS = 365 * 86'400.0;

// Linux refuses (E2BIG) any single argument or "NAME=value" environment string of
// MAX_ARG_STRLEN (32 pages = 128 KiB) bytes or more, counting its terminating NUL. The job's
// command is one argument of `/bin/sh -c`.
inline constexpr std::size_t kMaxArgBytes = 32 * 4096 - 1;

// Environment variables orchestrate sets for every attempt (the adapters and the brain);
// a job's own env may not set them, because they would be overwritten without a word.
// ORCH_TOKEN is not one: a job may set it (the API token it calls the CLI with), and the
// launch token's old name then gives way (scheduler/model/launch_token.h).
inline constexpr std::string_view kReservedEnv[] = {
    "ORCH_LAUNCH_TOKEN",
    "ORCH_JOB_ID",
    "ORCH_ATTEMPT",
    "ORCH_RUN_DIR",
    "ORCH_GPUS",
    "ORCH_NODES",
    "ORCH_SITE",
    "ORCH_RENDEZVOUS",
    "ORCH_CHECKPOINT_ROOT",
    "ORCH_CHECKPOINT_DIR",
    // The job's code and setup (issue 40, scheduler/model/workdir.h).
    "ORCH_WORKDIR",
    "ORCH_CODE_ARCHIVE",
    "ORCH_SETUP_DIR",
    "ORCH_SETUP_COMMAND",
    "ORCH_SETUP_FAILED",
};
// ORCH_DATASET_<NAME>: the path of each dataset the job reads.
inline constexpr std::string_view kReservedEnvPrefix = "ORCH_DATASET_";

// ORCH_AFTER_<NAME>_CHECKPOINT: the checkpoint of a job it waited for (issue 45, `after:`).
inline constexpr std::string_view kAfterEnvPrefix = "ORCH_AFTER_";

inline bool is_reserved_env(std::string_view name) {
  for (std::string_view r : kReservedEnv) {
    if (name == r) return true;
  }
  return name.substr(0, kReservedEnvPrefix.size()) == kReservedEnvPrefix ||
         name.substr(0, kAfterEnvPrefix.size()) == kAfterEnvPrefix;
}

}  // namespace orch::limits
