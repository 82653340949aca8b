#pragma once
// The toy trainer's command-line flags (examples/toy_trainer/README.md lists them all).

#include <cstdint>
#include <optional>
#include <string>

namespace toy {

inline constexpr int kExitUsage = 2;

struct Options {
  std::int64_t steps = 100;
  std::int64_t keep_ckpts = 3;
  int dim = 128;
  int batch = 64;
  double lr = 0.05;
  std::string ckpt_dir;
  std::optional<std::int64_t> ckpt_every;
  std::string resume_env = "ORCH_RESUME_FROM";
  std::int64_t step_delay_ms = 0;
  std::optional<std::int64_t> crash_at, signal_at, hang_at;
  std::optional<std::string> fault_attempt;
  // Multi-rank runs (world > 1).
  double rendezvous_timeout_s = 120;
  double collective_timeout_s = 600;
  std::optional<std::int64_t> slow_rank;
  std::int64_t slow_ms = 200;
  std::optional<std::int64_t> deadlock_at;
  std::optional<std::int64_t> fault_rank;
  std::int64_t report_ranks = 0;  // every N steps rank 0 adds "ranks" to progress; 0 = never
};

// Parses argv; on --help prints usage and exits 0, on a bad flag prints why and exits 2.
Options parse_flags(int argc, char** argv);

// Prints "toy_trainer: <why>" and the usage to stderr, exits 2.
[[noreturn]] void usage_error(const std::string& why);

}  // namespace toy
