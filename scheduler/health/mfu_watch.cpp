// MFU over an attempt's life (mfu_watch.h): warm-up, baseline, a sliding window, drop and
// recovery episodes; and stragglers from per-rank step times.
#include "scheduler/health/mfu_watch.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace orch {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

}  // namespace

std::optional<double> mfu_over_time(const std::vector<double>& mfu,
                                    const std::vector<double>& seconds, std::size_t last) {
  double work = 0;
  double time = 0;
  const std::size_t from = mfu.size() > last ? mfu.size() - last : 0;
  for (std::size_t i = from; i < mfu.size(); ++i) {
    const double s = i < seconds.size() ? seconds[i] : 1.0;
    work += mfu[i] * s;
    time += s;
  }
  if (!(time > 0)) return std::nullopt;
  return work / time;
}

MfuStep observe_mfu(MfuWatchState& state, double mfu, Millis at_ms, const MfuWatchPolicy& policy,
                    double seconds) {
  MfuStep step;
  // A sample that is not a number says nothing about the run; it neither counts nor warms up.
  if (!std::isfinite(mfu) || mfu < 0 || !std::isfinite(seconds) || !(seconds > 0)) {
    step.baseline = state.baseline.value_or(0);
    return step;
  }
  ++state.samples_seen;
  if (state.samples_seen <= policy.warmup_samples) return step;

  if (!state.baseline) {
    state.baseline_s.resize(state.baseline_samples.size(), 1.0);  // stored without weights
    state.baseline_samples.push_back(mfu);
    state.baseline_s.push_back(seconds);
    if (static_cast<int>(state.baseline_samples.size()) >= std::max(policy.baseline_samples, 1)) {
      state.baseline = mfu_over_time(state.baseline_samples, state.baseline_s).value_or(mfu);
      state.baseline_samples.clear();
      state.baseline_samples.shrink_to_fit();
      state.baseline_s.clear();
      state.baseline_s.shrink_to_fit();
      step.baseline = *state.baseline;
    }
    return step;
  }

  const auto window = static_cast<std::size_t>(std::max(policy.window_samples, 1));
  state.window_s.resize(state.window.size(), 1.0);  // stored without weights
  state.window.push_back(mfu);
  state.window_s.push_back(seconds);
  if (state.window.size() > window) {
    const auto extra = static_cast<std::ptrdiff_t>(state.window.size() - window);
    state.window.erase(state.window.begin(), state.window.begin() + extra);
    state.window_s.erase(state.window_s.begin(), state.window_s.begin() + extra);
  }
  step.baseline = *state.baseline;
  if (state.window.size() < window) return step;
  step.window_mean = mfu_over_time(state.window, state.window_s).value_or(0);

  // Recovery needs the window back within half the drop margin, so a run hovering at the
  // threshold does not flap between episodes; and it needs to stay there for hold_ms, so a burst
  // of samples does not end an episode that just began.
  const double drop_below = (1 - policy.drop_fraction) * step.baseline;
  const double recover_at = (1 - policy.drop_fraction / 2) * step.baseline;
  const bool held = !state.changed_at_ms || at_ms - *state.changed_at_ms >= policy.hold_ms;
  if (!state.dropped && step.window_mean < drop_below && held) {
    state.dropped = true;
    step.change = MfuChange::dropped;
  } else if (state.dropped && step.window_mean >= recover_at) {
    if (!state.recovering_ms) state.recovering_ms = at_ms;
    if (held && at_ms - *state.recovering_ms >= policy.hold_ms) {
      state.dropped = false;
      step.change = MfuChange::recovered;
    }
  } else if (state.dropped) {
    state.recovering_ms.reset();  // fell back below: the hold starts again
  }
  if (step.change != MfuChange::none) {
    state.changed_at_ms = at_ms;
    state.recovering_ms.reset();
  }
  // Each episode's end needs a full window of its own evidence: no flapping on one sample.
  if (step.change != MfuChange::none) {
    state.window.clear();
    state.window_s.clear();
  }
  return step;
}

std::vector<std::string> find_stragglers(const std::vector<RankTime>& ranks,
                                         const MfuWatchPolicy& policy) {
  if (ranks.size() < 3) return {};
  std::vector<double> times;
  times.reserve(ranks.size());
  for (const auto& r : ranks) times.push_back(r.step_time_s);
  const double limit = policy.straggler_factor * median(times);

  // A node with several slow ranks is named once, by its slowest rank.
  std::map<std::string, double> slowest;
  for (const auto& r : ranks) {
    if (r.node.empty() || !(r.step_time_s > limit)) continue;
    auto [it, fresh] = slowest.emplace(r.node, r.step_time_s);
    if (!fresh) it->second = std::max(it->second, r.step_time_s);
  }
  std::vector<std::pair<std::string, double>> sorted(slowest.begin(), slowest.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> out;
  out.reserve(sorted.size());
  for (auto& [node, t] : sorted) out.push_back(node);
  return out;
}

std::vector<std::string> tally_stragglers(MfuWatchState& state,
                                          const std::vector<std::string>& slowest, Millis now_ms,
                                          const MfuWatchPolicy& policy) {
  std::vector<std::string> confirmed;
  for (const auto& node : slowest) {
    StragglerTally& t = state.stragglers[node];
    if (t.reports++ == 0) t.first_ms = now_ms;
    if (!t.confirmed && t.reports >= policy.straggler_confirm_reports &&
        now_ms - t.first_ms >= policy.straggler_confirm_ms) {
      t.confirmed = true;
      confirmed.push_back(node);
    }
  }
  return confirmed;
}

nlohmann::json mfu_watch_to_json(const MfuWatchState& s, const std::vector<std::string>& suspects) {
  nlohmann::json j = {{"samples_seen", s.samples_seen},
                      {"baseline_samples", s.baseline_samples},
                      {"baseline_s", s.baseline_s},
                      {"window", s.window},
                      {"window_s", s.window_s},
                      {"dropped", s.dropped},
                      {"suspects", suspects}};
  if (s.baseline) j["baseline"] = *s.baseline;
  if (s.changed_at_ms) j["changed_at_ms"] = *s.changed_at_ms;
  if (s.recovering_ms) j["recovering_ms"] = *s.recovering_ms;
  if (!s.stragglers.empty()) {
    nlohmann::json t = nlohmann::json::object();
    for (const auto& [node, tally] : s.stragglers) {
      t[node] = {
          {"reports", tally.reports}, {"first_ms", tally.first_ms}, {"confirmed", tally.confirmed}};
    }
    j["stragglers"] = t;
  }
  return j;
}

MfuWatchState mfu_watch_from_json(const nlohmann::json& j, std::vector<std::string>& suspects) {
  MfuWatchState s;
  if (!j.is_object()) return s;
  s.samples_seen = j.value("samples_seen", 0);
  s.baseline_samples = j.value("baseline_samples", std::vector<double>{});
  s.window = j.value("window", std::vector<double>{});
  // Stored before the weights were kept: each sample weighs 1 s.
  s.baseline_s = j.value("baseline_s", std::vector<double>{});
  s.baseline_s.resize(s.baseline_samples.size(), 1.0);
  s.window_s = j.value("window_s", std::vector<double>{});
  s.window_s.resize(s.window.size(), 1.0);
  s.dropped = j.value("dropped", false);
  if (j.contains("baseline") && j["baseline"].is_number()) s.baseline = j["baseline"].get<double>();
  if (j.contains("changed_at_ms") && j["changed_at_ms"].is_number_integer()) {
    s.changed_at_ms = j["changed_at_ms"].get<Millis>();
  }
  if (j.contains("recovering_ms") && j["recovering_ms"].is_number_integer()) {
    s.recovering_ms = j["recovering_ms"].get<Millis>();
  }
  suspects = j.value("suspects", std::vector<std::string>{});
  if (j.contains("stragglers") && j["stragglers"].is_object()) {
    for (const auto& [node, t] : j["stragglers"].items()) {
      if (!t.is_object()) continue;
      s.stragglers[node] = {t.value("reports", 0), t.value("first_ms", Millis{0}),
                            t.value("confirmed", false)};
    }
  }
  return s;
}

}  // namespace orch
