#include "scheduler/lifecycle/attempt_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace orch {
namespace {

constexpr double kHourMs = 3'600'000.0;

std::size_t index_of(CostKind kind) {
  return static_cast<std::size_t>(kind);
}

Millis clamp_ms(std::optional<Millis> at, Millis lo, Millis hi, Millis absent) {
  return std::clamp(at.value_or(absent), lo, hi);
}

// The span of time a split counts: all of it, or one month's share (attempt_cost_within).
struct Window {
  Millis from = std::numeric_limits<Millis>::min();
  Millis to = std::numeric_limits<Millis>::max();
};

// Adds [from, to) held by the attempt's GPUs to one kind, the part inside the window: GPU-hours
// and its price over that span.
void charge(CostSplit& split, CostKind kind, Millis from, Millis to, int gpus,
            const PriceSpec* price, const Window& w) {
  from = std::max(from, w.from);
  to = std::min(to, w.to);
  if (to <= from || gpus <= 0) return;
  split.gpu_hours[index_of(kind)] += static_cast<double>(to - from) / kHourMs * gpus;
  if (price != nullptr) split.money[index_of(kind)] += cost_of(*price, from, to, gpus);
}

// The steps the attempt made and of them the ones re-done by the next attempt (job_stats.h).
struct StepCounts {
  std::int64_t done = 0;
  std::int64_t lost = 0;
};

StepCounts step_counts(const AttemptRow& a) {
  StepCounts c;
  if (a.first_step && a.last_step)
    c.done = std::max<std::int64_t>(*a.last_step - *a.first_step + 1, 0);
  c.lost = std::clamp<std::int64_t>(a.steps_lost, 0, c.done);
  return c;
}

// How long the re-done steps took: steps_lost x the attempt's mean step time, as ETTR counts it
// (step_time_total over the steps it made); without step times, the progress phase's wall time
// per step. At most the progress phase.
Millis redone_ms(const AttemptRow& a, const StepCounts& c, Millis progress_from, Millis end) {
  if (c.lost <= 0 || c.done <= 0) return 0;
  const double phase = static_cast<double>(end - progress_from);
  const double step_ms = a.step_time_total > 0 ? a.step_time_total * 1000.0 / c.done
                                               : phase / static_cast<double>(c.done);
  return static_cast<Millis>(std::llround(std::min(phase, step_ms * c.lost)));
}

// Splits the attempt's progress phase [from, end): the re-done steps end at its last progress
// line (they were the last it made); the rest is useful, or failed when it ended (not by
// succeeding) without keeping a step.
void charge_progress(CostSplit& split, const AttemptRow& a, Millis from, Millis end,
                     const PriceSpec* price, const Window& w) {
  const StepCounts c = step_counts(a);
  const Millis redone = redone_ms(a, c, from, end);
  const Millis last = clamp_ms(a.last_progress_ms, from, end, end);
  const Millis redone_from = std::clamp(last - redone, from, end - redone);
  const bool kept_none = a.ended_ms && a.cause != ExitCause::succeeded && c.done - c.lost <= 0;
  const CostKind rest = kept_none ? CostKind::failed : CostKind::useful;
  charge(split, rest, from, redone_from, a.gpus, price, w);
  charge(split, CostKind::redone, redone_from, redone_from + redone, a.gpus, price, w);
  charge(split, rest, redone_from + redone, end, a.gpus, price, w);
}

CostSplit split_attempt(const AttemptRow& a, const PriceSpec* price, Millis now,
                        const Window& w = {}) {
  CostSplit split;
  if (!a.not_launched.empty()) return split;
  const Millis start = a.started_ms;
  const Millis end = std::max(start, a.ended_ms.value_or(now));
  const Millis running = clamp_ms(a.running_ms, start, end, end);
  charge(split, CostKind::queued, start, running, a.gpus, price, w);
  // An attempt that succeeded without ever printing a progress line kept its work: its run is
  // useful, not start-up.
  const bool silent_success = !a.first_progress_ms && a.cause == ExitCause::succeeded;
  std::optional<Millis> first_progress = a.first_progress_ms;
  if (!first_progress && a.first_step) first_progress = running;  // rows from before the column
  if (silent_success) first_progress = running;
  const Millis progress = clamp_ms(first_progress, running, end, end);
  charge(split, CostKind::restart, running, progress, a.gpus, price, w);
  charge_progress(split, a, progress, end, price, w);
  return split;
}

double sum(const std::array<double, kCostKinds>& parts) {
  return std::accumulate(parts.begin(), parts.end(), 0.0);
}

}  // namespace

const char* cost_kind_name(CostKind kind) {
  switch (kind) {
    case CostKind::useful:
      return "useful";
    case CostKind::redone:
      return "redone";
    case CostKind::restart:
      return "restart";
    case CostKind::queued:
      return "queued";
    case CostKind::failed:
      return "failed";
  }
  return "unknown";
}

double CostSplit::gpu_hours_total() const {
  return sum(gpu_hours);
}
double CostSplit::money_total() const {
  return sum(money);
}
double CostSplit::lost_money() const {
  return money_total() - money[index_of(CostKind::useful)];
}
double CostSplit::lost_gpu_hours() const {
  return gpu_hours_total() - gpu_hours[index_of(CostKind::useful)];
}
void CostSplit::add(const CostSplit& other) {
  for (std::size_t i = 0; i < kCostKinds; ++i) {
    gpu_hours[i] += other.gpu_hours[i];
    money[i] += other.money[i];
  }
}

CostSplit attempt_cost_within(const AttemptRow& attempt, const PriceSpec* price, Millis now,
                              Millis from_ms, Millis to_ms) {
  return split_attempt(attempt, price, now, Window{from_ms, to_ms});
}

std::vector<AttemptCost> attempt_costs(
    const std::vector<AttemptRow>& attempts,
    const std::function<const PriceSpec*(const std::string&)>& price_of, Millis now) {
  std::vector<AttemptCost> out;
  out.reserve(attempts.size());
  for (const auto& a : attempts) {
    AttemptCost cost;
    cost.attempt = a.id;
    cost.job = a.job_id;
    cost.no = a.no;
    cost.cluster = a.cluster;
    const PriceSpec* price = price_of ? price_of(a.cluster) : nullptr;
    cost.split = split_attempt(a, price, now);
    out.push_back(std::move(cost));
  }
  return out;
}

}  // namespace orch
