// The provider scorecard (scorecard.h): each cluster's facts are tallied once, a cluster card is
// read off its tally, and a vendor card off the sum of its clusters' tallies.
#include "scheduler/health/scorecard.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "scheduler/health/recovery_breakdown.h"

namespace orch {
namespace {

constexpr double kMsPerHour = 3600.0 * 1000.0;

// Every fact of one cluster (or, summed, of one vendor) that a card is computed from.
struct Tally {
  double up_ms = 0;
  double observed_ms = 0;
  double gpu_ms = 0;   // GPU-milliseconds under attempts
  double node_ms = 0;  // node-milliseconds under attempts
  int interruptions = 0;
  int node_failures = 0;
  RestartSamples restarts;
  MfuOverTime mfu;
  std::vector<double> save_time_s;
  int io_stalls = 0;
  int nodes = 0;
  int quarantined_nodes = 0;
  int open_tickets = 0;
  int tickets = 0;
  std::vector<double> response_h;
  std::vector<double> resolution_h;
  std::vector<double> delivery_delay_days;
  bool awaiting_delivery = false;

  void add(const Tally& o) {
    up_ms += o.up_ms;
    observed_ms += o.observed_ms;
    gpu_ms += o.gpu_ms;
    node_ms += o.node_ms;
    interruptions += o.interruptions;
    node_failures += o.node_failures;
    for (auto part :
         {&RestartSamples::detection_s, &RestartSamples::recovery_s, &RestartSamples::backoff_s,
          &RestartSamples::placing_s, &RestartSamples::site_s, &RestartSamples::startup_s}) {
      auto& d = restarts.*part;
      d.insert(d.end(), (o.restarts.*part).begin(), (o.restarts.*part).end());
    }
    mfu.add(o.mfu);
    save_time_s.insert(save_time_s.end(), o.save_time_s.begin(), o.save_time_s.end());
    io_stalls += o.io_stalls;
    nodes += o.nodes;
    quarantined_nodes += o.quarantined_nodes;
    open_tickets += o.open_tickets;
    tickets += o.tickets;
    response_h.insert(response_h.end(), o.response_h.begin(), o.response_h.end());
    resolution_h.insert(resolution_h.end(), o.resolution_h.begin(), o.resolution_h.end());
    delivery_delay_days.insert(delivery_delay_days.end(), o.delivery_delay_days.begin(),
                               o.delivery_delay_days.end());
    awaiting_delivery = awaiting_delivery || o.awaiting_delivery;
  }
};

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Nearest rank: the smallest value with at least p of the values at or below it.
std::optional<double> percentile(std::vector<double> v, double p) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  return v[rank - 1];
}

// Time the site answered within [from, now], from its health changes. Before its first change
// a site counts as up.
void tally_availability(const std::vector<const HealthChange*>& changes, Millis from, Millis now,
                        Tally& t) {
  if (from >= now) return;
  bool up = true;
  Millis cursor = from;
  for (const HealthChange* c : changes) {
    if (c->at_ms > now) break;
    if (c->at_ms > cursor) {
      if (up) t.up_ms += static_cast<double>(c->at_ms - cursor);
      cursor = c->at_ms;
    }
    up = c->up;
  }
  if (up) t.up_ms += static_cast<double>(now - cursor);
  t.observed_ms += static_cast<double>(now - from);
}

Scorecard card(std::string name, std::string kind, std::vector<std::string> clusters,
               const Tally& t) {
  Scorecard c;
  c.name = std::move(name);
  c.kind = std::move(kind);
  c.clusters = std::move(clusters);
  c.availability = t.observed_ms > 0 ? t.up_ms / t.observed_ms : 1.0;
  c.gpu_hours = t.gpu_ms / kMsPerHour;
  c.interruptions = t.interruptions;
  if (c.gpu_hours > 0) c.interruptions_per_1k_gpu_h = t.interruptions / c.gpu_hours * 1000;
  if (t.node_failures > 0) c.node_mtbf_h = t.node_ms / kMsPerHour / t.node_failures;
  c.detection_median_s = median(t.restarts.detection_s);
  c.detection_p95_s = percentile(t.restarts.detection_s, 0.95);
  c.recovery_median_s = median(t.restarts.recovery_s);
  c.recovery_p95_s = percentile(t.restarts.recovery_s, 0.95);
  c.backoff_median_s = median(t.restarts.backoff_s);
  c.placing_median_s = median(t.restarts.placing_s);
  c.site_median_s = median(t.restarts.site_s);
  c.startup_median_s = median(t.restarts.startup_s);
  c.mfu = t.mfu.value();
  c.checkpoint_save_p95_s = percentile(t.save_time_s, 0.95);
  c.io_stalls = t.io_stalls;
  c.nodes = t.nodes;
  c.quarantined_nodes = t.quarantined_nodes;
  if (t.nodes > 0) c.quarantined_share = static_cast<double>(t.quarantined_nodes) / t.nodes;
  c.open_tickets = t.open_tickets;
  c.tickets = t.tickets;
  c.ticket_response_median_h = median(t.response_h);
  c.ticket_resolution_median_h = median(t.resolution_h);
  c.delivery_delay_days = median(t.delivery_delay_days);
  c.awaiting_delivery = t.awaiting_delivery;
  return c;
}

}  // namespace

bool is_interruption(ExitCause cause) {
  return is_infra_cause(cause) && cause != ExitCause::time_limit;
}

std::map<std::string, RestartSamples> restart_samples(const ScorecardInputs& in) {
  std::map<std::pair<std::int64_t, int>, const AttemptFact*> by_number;
  for (const auto& a : in.attempts) by_number[{a.job_id, a.no}] = &a;
  std::map<std::string, RestartSamples> out;
  for (const auto& a : in.attempts) {
    const bool ended_in_window =
        a.ended_ms && *a.ended_ms >= in.window_start && *a.ended_ms <= in.now;
    if (!ended_in_window || !is_interruption(a.cause)) continue;
    RestartSamples& s = out[a.cluster];
    if (a.last_alive_ms) {
      const Millis alive = std::min(*a.last_alive_ms, *a.ended_ms);
      s.detection_s.push_back(static_cast<double>(*a.ended_ms - alive) / 1000.0);
    }
    auto next = by_number.find({a.job_id, a.no + 1});
    if (next == by_number.end()) continue;
    const AttemptFact& n = *next->second;
    if (n.running_ms) {
      const Millis gap = std::max<Millis>(0, *n.running_ms - *a.ended_ms);
      s.recovery_s.push_back(static_cast<double>(gap) / 1000.0);
    }
    const RecoveryBreakdown parts = recovery_breakdown(
        {a.last_alive_ms, *a.ended_ms, n.due_ms, n.started_ms, n.running_ms, n.first_progress_ms});
    s.backoff_s.push_back(parts.backoff_s);
    s.placing_s.push_back(parts.placing_s);
    if (parts.site_s) s.site_s.push_back(*parts.site_s);
    if (parts.startup_s) s.startup_s.push_back(*parts.startup_s);
  }
  return out;
}

namespace {

using Tallies = std::map<std::string, Tally>;

// The tally of a configured cluster; nullptr for a cluster no longer configured.
Tally* tally_of(Tallies& tallies, const std::string& cluster) {
  auto it = tallies.find(cluster);
  return it == tallies.end() ? nullptr : &it->second;
}

// What each cluster's own rows say: its delivery against its promise, the time it answered in
// the window (from its health changes, oldest first), its nodes.
void tally_clusters(const ScorecardInputs& in, Tallies& tallies) {
  const Millis now = in.now;
  std::map<std::string, std::vector<const HealthChange*>> changes;
  for (const auto& h : in.health) changes[h.cluster].push_back(&h);
  for (auto& [name, list] : changes) {
    std::stable_sort(list.begin(), list.end(), [](const HealthChange* a, const HealthChange* b) {
      return a->at_ms < b->at_ms;
    });
  }
  for (const auto& c : in.clusters) {
    Tally& t = tallies[c.name];
    if (c.promised_ms) {
      constexpr double kMsPerDay = 86'400'000.0;
      if (c.delivered_ms) {
        t.delivery_delay_days.push_back(static_cast<double>(*c.delivered_ms - *c.promised_ms) /
                                        kMsPerDay);
      } else if (now > *c.promised_ms) {
        t.delivery_delay_days.push_back(static_cast<double>(now - *c.promised_ms) / kMsPerDay);
        t.awaiting_delivery = true;
      }
    }
    tally_availability(changes[c.name], std::max(in.window_start, c.since_ms), now, t);
    t.nodes = c.nodes;
    t.quarantined_nodes = c.quarantined_nodes;
  }
}

// The attempts' GPU- and node-time in the window, their MFU, the interruptions, and the
// restarts that followed them.
void tally_attempts(const ScorecardInputs& in, Tallies& tallies) {
  const Millis w0 = in.window_start;
  const Millis now = in.now;
  for (const auto& a : in.attempts) {
    Tally* t = tally_of(tallies, a.cluster);
    if (!t) continue;
    const Millis end = a.ended_ms.value_or(now);
    const Millis overlap = std::max<Millis>(0, std::min(end, now) - std::max(a.started_ms, w0));
    t->gpu_ms += static_cast<double>(a.gpus) * static_cast<double>(overlap);
    t->node_ms += static_cast<double>(a.nodes) * static_cast<double>(overlap);
    const bool in_window = a.started_ms <= now && end >= w0;
    if (in_window && a.mfu) t->mfu.add(*a.mfu, a.mfu_time_s);
    const bool ended_in_window = a.ended_ms && *a.ended_ms >= w0 && *a.ended_ms <= now;
    if (ended_in_window && is_interruption(a.cause)) ++t->interruptions;
  }
  for (auto& [cluster, samples] : restart_samples(in)) {
    if (Tally* t = tally_of(tallies, cluster)) t->restarts = std::move(samples);
  }
}

// The support tickets: open now, opened in the window, and the hours to a first response and
// to a resolution that fell in the window.
void tally_tickets(const ScorecardInputs& in, Tallies& tallies) {
  const Millis w0 = in.window_start;
  const Millis now = in.now;
  for (const auto& tk : in.tickets) {
    Tally* t = tally_of(tallies, tk.cluster);
    if (!t || tk.opened_ms > now) continue;
    if (!tk.resolved_ms || *tk.resolved_ms > now) ++t->open_tickets;
    if (tk.opened_ms >= w0) ++t->tickets;
    if (tk.first_response_ms && *tk.first_response_ms >= w0 && *tk.first_response_ms <= now) {
      t->response_h.push_back(static_cast<double>(*tk.first_response_ms - tk.opened_ms) /
                              kMsPerHour);
    }
    if (tk.resolved_ms && *tk.resolved_ms >= w0 && *tk.resolved_ms <= now) {
      t->resolution_h.push_back(static_cast<double>(*tk.resolved_ms - tk.opened_ms) / kMsPerHour);
    }
  }
}

// A card per cluster in the clusters file's order, then a card per vendor (in the order its
// first cluster comes) off the sum of its clusters' tallies.
std::vector<Scorecard> cards_of(const ScorecardInputs& in, Tallies& tallies) {
  std::vector<Scorecard> out;
  std::vector<std::string> vendors;
  std::map<std::string, std::pair<Tally, std::vector<std::string>>> by_vendor;
  for (const auto& c : in.clusters) {
    const Tally& t = tallies[c.name];
    out.push_back(card(c.name, "cluster", {c.name}, t));
    if (c.vendor.empty()) continue;
    auto [it, fresh] = by_vendor.try_emplace(c.vendor);
    if (fresh) vendors.push_back(c.vendor);
    it->second.first.add(t);
    it->second.second.push_back(c.name);
  }
  for (const auto& v : vendors) {
    auto& [t, members] = by_vendor[v];
    out.push_back(card(v, "vendor", members, t));
  }
  return out;
}

}  // namespace

std::vector<Scorecard> compute_scorecards(const ScorecardInputs& in) {
  Tallies tallies;
  for (const auto& c : in.clusters) tallies[c.name];
  tally_clusters(in, tallies);
  tally_attempts(in, tallies);
  for (const auto& f : in.node_failures) {
    Tally* t = tally_of(tallies, f.cluster);
    if (t && f.at_ms >= in.window_start && f.at_ms <= in.now) ++t->node_failures;
  }
  tally_tickets(in, tallies);
  for (const auto& cp : in.checkpoints) {
    if (Tally* t = tally_of(tallies, cp.cluster)) t->save_time_s.push_back(cp.save_time_s);
  }
  for (const auto& cluster : in.io_stalls) {
    if (Tally* t = tally_of(tallies, cluster)) ++t->io_stalls;
  }
  return cards_of(in, tallies);
}

}  // namespace orch
