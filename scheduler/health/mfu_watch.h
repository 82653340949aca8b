#pragma once
// MFU over an attempt's life, pure: a baseline from its first healthy samples, a window over the
// latest, and an `mfu-drop` when the window falls more than drop_fraction below the baseline;
// both are work over time (each step's MFU weighted by its step time), as every MFU figure is:
// a mean of per-step ratios over-weights fast steps, so a run whose slow node stretches every
// few steps would look better than it runs, and a baseline taken as the typical (median) step
// would put a steady run with a periodic slow step (an evaluation, a log flush) in a drop;
// `mfu-recovered` when it comes back to within half that margin and stays there for hold_ms (so
// a run hovering at the threshold, or a burst of fast samples, does not flap). No two changes
// are ever less than hold_ms apart. Stragglers: per-rank step times naming the slow nodes.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/clock.h"

namespace orch {

struct MfuWatchPolicy {
  double drop_fraction = 0.10;    // window below (1 - this) x baseline is a drop
  int warmup_samples = 3;         // first samples ignored (compilation, cache warm-up)
  int baseline_samples = 20;      // the next ones' work over time is the baseline
  int window_samples = 20;        // the latest ones' work over time is compared with it (a window
                                  // long enough that step-to-step noise does not make episodes)
  double straggler_factor = 1.2;  // a rank slower than this x the median step time
  // Hysteresis in time: a recovery needs the window back within half the margin for this long
  // without a break, and a drop is not raised sooner than this after a recovery. A window is
  // counted in samples, and a fast job (or one observation's batch of lines, all taken in at
  // one instant) can fill it in well under a second.
  Millis hold_ms = 10'000;
  // A straggler is confirmed, and the attempt run again without it, once its ranks were the
  // slowest in this many rank reports spread over at least this long: one slow step (a
  // checkpoint save, a page cache miss) is not a bad node.
  int straggler_confirm_reports = 5;
  Millis straggler_confirm_ms = 30'000;
};

// How often one node's ranks were named slowest in an attempt, since when, and whether that
// confirmed it a straggler.
struct StragglerTally {
  int reports = 0;
  Millis first_ms = 0;
  bool confirmed = false;
};

// Kept per attempt by the brain (stored with the attempt).
struct MfuWatchState {
  std::map<std::string, StragglerTally> stragglers;  // by node
  int samples_seen = 0;
  std::vector<double> baseline_samples;  // until the baseline is set
  std::vector<double> baseline_s;        // their step times (the weights)
  std::optional<double> baseline;
  std::vector<double> window;           // the latest window_samples values
  std::vector<double> window_s;         // their step times
  bool dropped = false;                 // inside a drop episode
  std::optional<Millis> changed_at_ms;  // the latest drop or recovery
  std::optional<Millis> recovering_ms;  // since when the window has been back (in an episode)
};

enum class MfuChange { none, dropped, recovered };

struct MfuStep {
  MfuChange change = MfuChange::none;
  double baseline = 0;
  double window_mean = 0;
};

// Feeds one step's MFU, over a step of `seconds`, taken in at `at_ms`; says when a drop starts or
// ends (once per episode). Nothing is decided until the baseline is set and the window is full. A
// sample that is not a finite number >= 0, or whose step time is not positive, is skipped (it
// does not count towards the warm-up either).
MfuStep observe_mfu(MfuWatchState& state, double mfu, Millis at_ms, const MfuWatchPolicy& policy,
                    double seconds = 1.0);

// Work over time of samples and their step times (a missing step time weighs 1 s: state stored
// before the weights were kept); nullopt when they cover no time. Of the newest `last` when given.
std::optional<double> mfu_over_time(const std::vector<double>& mfu,
                                    const std::vector<double>& seconds,
                                    std::size_t last = static_cast<std::size_t>(-1));

struct RankTime {
  int rank = 0;
  std::string node;
  double step_time_s = 0;
};

// Nodes whose ranks' step time exceeds straggler_factor x the median over ranks (each node once,
// slowest first). Needs at least 3 ranks; fewer give no stragglers.
std::vector<std::string> find_stragglers(const std::vector<RankTime>& ranks,
                                         const MfuWatchPolicy& policy);

// Counts one rank report's stragglers (find_stragglers) at now_ms; the nodes this report
// confirms (each once per attempt: straggler_confirm_reports reports over at least
// straggler_confirm_ms since its first).
std::vector<std::string> tally_stragglers(MfuWatchState& state,
                                          const std::vector<std::string>& slowest, Millis now_ms,
                                          const MfuWatchPolicy& policy);

// The state as stored with the attempt (with the straggler suspects already named).
nlohmann::json mfu_watch_to_json(const MfuWatchState& s, const std::vector<std::string>& suspects);
MfuWatchState mfu_watch_from_json(const nlohmann::json& j, std::vector<std::string>& suspects);

// Downsampling for the MFU history: samples fall in buckets of bucket_ms.
inline Millis mfu_bucket_start(Millis at_ms, Millis bucket_ms = 60'000) {
  return at_ms - (at_ms % bucket_ms);
}

}  // namespace orch
