#pragma once
// MFU-aware throttling of transfers, pure (issue 5): AIMD on a transfer's bandwidth cap. While a
// transfer reads or writes a site that runs jobs, each such job's recent MFU is compared with its
// baseline; one more than `mfu_drop_percent` below cuts the cap (multiplicative decrease); while
// all hold, the cap rises by `increase` per interval (additive increase) back to the base cap.
// At most one change per interval, so rsync (restarted for each new cap) is not churned.
//
// throttle_step, precisely (spec = the site's ThrottleSpec, MB = 1e6 bytes):
//   - Nothing changes within spec.interval_s of state.last_change_ms.
//   - Jobs with baseline <= 0 are ignored. A job drops when recent < baseline x (1 - pct/100).
//   - Any drop: cut. current = cap_bps, or for an uncapped transfer (cap 0) its measured_bps
//     (0 as well: nothing to cut from, no change). new = max(min_mb_s MB, current x decrease).
//     A cap already at the floor is not "cut" again (no change). job_id names the job with the
//     largest relative drop (the lower id on a tie).
//   - No drop (also when no job is watched) and a cap in effect: raise.
//       base > 0, cap < base: new = min(base, cap + inc), inc = increase_mb_s MB, or base / 10
//         when increase_mb_s is 0; so the last step lands on the base exactly.
//       base 0 (configured uncapped): new = cap + inc, inc = increase_mb_s MB or cap / 10 when
//         0; and once that new cap exceeds 4x the measured rate (measured_bps > 0), the cap no
//         longer binds the transfer, so it returns to uncapped: new_cap_bps = 0.
//     A cap already at its base (or a transfer uncapped) does not change.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/health/mfu_watch.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/time_window.h"

namespace orch {

struct ThrottleState {
  double cap_bps = 0;       // current cap, bytes/s; 0: uncapped
  double base_cap_bps = 0;  // what it returns to; 0: uncapped (the cap then starts from the
                            // measured rate when it is first cut)
  double measured_bps = 0;  // the transfer's current rate (for the first cut of an uncapped one)
  std::optional<Millis> last_change_ms;
};

struct JobMfuReading {
  std::int64_t job_id = 0;
  std::string cluster;
  double baseline = 0;  // the attempt's MFU baseline
  double recent = 0;    // its recent MFU (recent_mfu)
};

enum class ThrottleChange { none, cut, raise };

struct ThrottleDecision {
  ThrottleChange change = ThrottleChange::none;
  double new_cap_bps = 0;
  std::int64_t job_id = 0;  // the job whose drop caused a cut (the worst one)
  // For events: "job 7's MFU 0.310 is 11.4% below its baseline 0.350 on alpha: cap 40.0 ->
  // 20.0 MB/s", "MFU holds on alpha and beta: cap 20.0 -> 24.0 MB/s". An uncapped side reads
  // "uncapped (measured 40.0 MB/s) -> 20.0 MB/s" and "cap 88.0 MB/s -> uncapped (over 4x the
  // measured 20.0 MB/s)"; with no job to watch, "no job's MFU to watch: cap ...".
  std::string why;
};

ThrottleDecision throttle_step(const ThrottleState& state, const std::vector<JobMfuReading>& jobs,
                               const ThrottleSpec& spec, Millis now);

// The work over time of the newest n samples of the attempt's MFU window (fewer when it has
// fewer); nullopt without a baseline or samples.
std::optional<double> recent_mfu(const MfuWatchState& state, int n = 5);

// Transfer windows: TimeWindow, parse_window and in_windows live in scheduler/spec/time_window.h
// (included above), so that the clusters parser can validate `data.windows` with them.

}  // namespace orch
