#pragma once
// Prices of GPU-hours (issue 45), pure: the clusters file's `price:` section as parsed
// (spec/clusters_parser reads it) and the arithmetic over it. No I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace orch {

// Milliseconds since the Unix epoch (as scheduler/common/clock.h; not included here, so that
// orch::Clock does not reach the adapters that name a Clock of their own through cluster_spec.h).
using Millis = std::int64_t;

// What a cluster's GPU-hour costs (clusters file `price:`, docs/config.md "Prices", issue 45).
// Money is in one currency across the fleet (the file is refused otherwise). A window overrides
// the base price for hours of the day (UTC, "HH:MM-HH:MM", may wrap midnight: a night rate).
// A contract's start and end bound a reservation paid whether used or not: its GPUs x hours x
// price is the committed spend, and what attempts did not use of it is idle (report cost).
struct PriceWindow {
  std::string hours;  // "22:00-06:00" as written
  int from_min = 0;   // minutes after UTC midnight, [from_min, to_min), wrapping when from > to
  int to_min = 0;
  double per_gpu_hour = 0;
};
struct PriceSpec {
  bool configured = false;  // the section is present; absent: the cluster has no price (0)
  double per_gpu_hour = 0;
  std::string currency = "USD";  // ISO 4217-like code, upper case
  std::vector<PriceWindow> windows;
  std::string contract_start, contract_end;  // "2026-12-01" as written; empty: none
  std::optional<std::int64_t> contract_start_ms, contract_end_ms;  // UTC midnight, ms
};

// The price per GPU-hour at `at_ms` (a window's where one covers that minute of the UTC day,
// else the base price); 0 for a price not configured.
double price_at(const PriceSpec& price, Millis at_ms);

// What `gpus` GPUs held over [from_ms, to_ms) cost: exact, split at every window edge and
// midnight (not sampled). 0 when to_ms <= from_ms or the price is not configured.
double cost_of(const PriceSpec& price, Millis from_ms, Millis to_ms, int gpus);

// A contract's committed spend within [from_ms, to_ms): total_gpus x the overlap of that span
// with [contract_start, contract_end) x the price (windows applied). 0 without a contract.
double committed_cost(const PriceSpec& price, int total_gpus, Millis from_ms, Millis to_ms);

// The UTC calendar month of an instant, "2026-12", and its first millisecond; and the next's.
std::string month_of(Millis at_ms);
Millis month_start_ms(Millis at_ms);
Millis next_month_start_ms(Millis at_ms);

}  // namespace orch
