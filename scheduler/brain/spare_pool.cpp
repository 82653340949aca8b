// The brain's hot spares (spare_pool.h): refill, burn-in verdicts, holders, hand-over.
#include "scheduler/brain/spare_pool.h"

#include <algorithm>
#include <set>

#include "scheduler/brain/brain_text.h"
#include "scheduler/health/quarantine.h"
#include "scheduler/model/launch_request_json.h"
#include "scheduler/spec/provider_catalog.h"

namespace orch {
namespace {

using brain_text::base36;

// After a spare failed its burn-in or was lost: the next try on that cluster waits this long.
constexpr Millis kRetryAfterMs = 60'000;
// A node that failed under a job this recently is not made a spare: its site may not yet have
// said that it is down (Slurm flags a dead node "not responding" seconds after a job's
// heartbeats stop), and a burn-in of a dead node would quarantine it for its cool-down.
constexpr Millis kFailedRecentlyMs = 60'000;
// A cluster with no idle node for a spare is looked at again after this long.
constexpr Millis kLookAgainMs = 5'000;
// The burn-in round's token: the holder's and this.
constexpr std::string_view kBurnInSuffix = "-b";

std::string holder_token(const std::string& burn_in_token) {
  if (burn_in_token.ends_with(kBurnInSuffix)) {
    return burn_in_token.substr(0, burn_in_token.size() - kBurnInSuffix.size());
  }
  return burn_in_token;
}

OutboxRow action(const SpareRow& s, ActionKind kind, std::string token, nlohmann::json payload,
                 Millis now) {
  OutboxRow row;
  row.cluster = s.cluster;
  row.kind = kind;
  row.token = std::move(token);
  row.payload = std::move(payload);
  row.created_ms = now;
  return row;
}

std::string spare_name(const SpareRow& s) {
  return "hot spare " + s.node + " of " + s.cluster;
}

}  // namespace

bool may_hold_spares(const ClusterSpec& spec) {
  const ProviderTraits* p = find_provider(spec.provider);
  return p != nullptr && p->node_local_copies;
}

LaunchRequest spare_holder_request(const ClusterSpec& spec, const SpareRow& spare) {
  LaunchRequest r;
  r.token = spare.token;
  r.job_name = "orch-spare";
  r.command = "exec sleep 2147483647";
  r.nodes = 1;
  r.gpus_per_node = spec.gpus_per_node;
  r.on_node = spare.node;
  r.hang_after_s = 0;  // it prints nothing, by design
  return r;
}

// ---- refill ------------------------------------------------------------------------------

Result<void> SparePool::refill() {
  for (const ClusterSpec& spec : clusters_) {
    if (!may_hold_spares(spec)) continue;  // it cannot pin a holder to a node
    auto wanted = wanted_spares(spec);
    if (!wanted) return wanted.error();
    // A cluster that asks for none is looked at once after a start, for spares held before its
    // spec changed, and whenever its jobs' own spares change.
    auto& last = last_wanted_[spec.name];
    if (*wanted == 0 && last == 0 && checked_all_) continue;
    last = *wanted;
    if (auto r = refill_cluster(spec, *wanted); !r) return r;
  }
  checked_all_ = true;
  return Ok{};
}

Result<int> SparePool::wanted_spares(const ClusterSpec& spec) {
  // The jobs' own spares change only when attempts start or end there: read again then.
  auto& cached = job_spares_[spec.name];
  if (cached.first != store_.capacity_epoch()) {
    auto attempts = store_.watched_attempts(spec.name);
    if (!attempts) return attempts.error();
    int own = 0;
    for (const auto& a : *attempts) {
      if (a.state == AttemptState::exited) continue;
      auto job = store_.job(a.job_id);
      if (!job) return job.error();
      if (*job) own += (*job)->spec.spares;
    }
    cached = {store_.capacity_epoch(), own};
  }
  // Never all of the cluster: a job needs a node to run on.
  return std::min(spec.spares + cached.second, std::max(0, spec.nodes - 1));
}

Result<void> SparePool::refill_cluster(const ClusterSpec& spec, int asked) {
  auto row = store_.cluster(spec.name);
  if (!row) return row.error();
  if (!*row) return Ok{};
  auto live = store_.live_spares(spec.name);
  if (!live) return live.error();
  // Spares serve work: a cluster that takes none (draining, retired, not yet admitted) keeps
  // none. A site that does not answer keeps what it has until it does.
  const ClusterRow& c = **row;
  if (c.health != SiteHealth::healthy) return Ok{};
  const int wanted = c.admission == Admission::active ? asked : 0;
  for (int i = static_cast<int>(live->size()) - 1; i >= wanted; --i) {
    SpareRow s = (*live)[static_cast<std::size_t>(i)];
    if (auto r = end_spare(s, SpareState::released,
                           wanted == 0 ? "the cluster is " + std::string(to_string(c.admission)) +
                                             " or asks for no spares"
                                       : "the cluster asks for " + std::to_string(wanted));
        !r) {
      return r;
    }
  }
  if (static_cast<int>(live->size()) >= wanted) return Ok{};
  if (auto it = next_try_ms_.find(spec.name); it != next_try_ms_.end()) {
    if (clock_.now_ms() < it->second) return Ok{};
    next_try_ms_.erase(it);
  }
  for (int i = static_cast<int>(live->size()); i < wanted; ++i) {
    auto started = start_spare(spec, *live, i);
    if (!started) return started.error();
    if (!*started) {
      // No idle node: a full cluster's nodes are not read on every tick while it stays full.
      next_try_ms_[spec.name] = clock_.now_ms() + kLookAgainMs;
      break;
    }
    auto again = store_.live_spares(spec.name);
    if (!again) return again.error();
    *live = std::move(*again);
  }
  return Ok{};
}

Result<bool> SparePool::start_spare(const ClusterSpec& spec, const std::vector<SpareRow>& live,
                                    int index) {
  auto attempts = store_.watched_attempts(spec.name);
  if (!attempts) return attempts.error();
  std::set<std::string> taken;
  for (const auto& s : live) taken.insert(s.node);
  for (const auto& a : *attempts) {
    // A launch the site has not placed yet may land on any node: wait until it has.
    if (a.state == AttemptState::launching && a.nodes.empty()) return false;
    if (a.state != AttemptState::exited) taken.insert(a.nodes.begin(), a.nodes.end());
  }
  auto nodes = store_.nodes(spec.name);
  if (!nodes) return nodes.error();
  const Millis now = clock_.now_ms();
  const NodeRow* pick = nullptr;
  for (const auto& n : *nodes) {
    if (!n.healthy || n.state != NodeState::active || n.gpus_busy > 0) continue;
    if (taken.count(n.name) || !n.probe_token.empty()) continue;
    // A node that just failed under a job may be dead before its site says so: not yet.
    auto failed =
        store_.node_events_since(spec.name, n.name, failure_kinds(), now - kFailedRecentlyMs);
    if (!failed) return failed.error();
    if (!failed->empty()) continue;
    pick = &n;
    break;
  }
  if (pick == nullptr) return false;
  SpareRow s;
  s.cluster = spec.name;
  s.node = pick->name;
  s.token = std::string(kSpareTokenPrefix) + spec.name + "-" +
            base36(static_cast<std::uint64_t>(now)) + "-" + std::to_string(++serial_);
  s.state = SpareState::burning_in;
  s.gpus = pick->gpus > 0 ? pick->gpus : spec.gpus_per_node;
  s.created_ms = now;
  auto id = store_.add_spare(s);
  if (!id) return id.error();
  ProbeRequest probe = burn_in_probe(spec, s.token + std::string(kBurnInSuffix));
  probe.nodes = {s.node};
  if (auto r = store_.enqueue(
          action(s, ActionKind::probe, probe.token, probe_request_to_json(probe), now));
      !r) {
    return r.error();
  }
  if (auto r = note(spare_name(s) + ": burning in (spare " + std::to_string(index + 1) + ")"); !r) {
    return r.error();
  }
  return true;
}

// ---- results -----------------------------------------------------------------------------

Result<BrainReply> SparePool::on(const ProbeCompleted& e) {
  const Millis now = clock_.now_ms();
  if (auto r = store_.mark_action_done(e.outbox_id, now); !r) return r.error();
  auto found = store_.spare_by_token(holder_token(e.token));
  if (!found) return found.error();
  if (!*found || (*found)->state != SpareState::burning_in) return BrainReply{};
  SpareRow s = **found;
  auto verdict = health_.judge_spare_burn_in(e, s.node);
  if (!verdict) return verdict.error();
  if (!verdict->passed) {
    next_try_ms_[s.cluster] = now + kRetryAfterMs;
    if (auto r = end_spare(s, SpareState::failed, "failed its burn-in: " + verdict->reason); !r) {
      return r.error();
    }
    return BrainReply{};
  }
  const ClusterSpec* spec = cluster_spec(s.cluster);
  if (spec == nullptr) return BrainReply{};
  s.state = SpareState::holding;
  s.held_ms = now;
  if (auto r = store_.update_spare(s); !r) return r.error();
  if (auto r = store_.enqueue(action(s, ActionKind::launch, s.token,
                                     launch_request_to_json(spare_holder_request(*spec, s)), now));
      !r) {
    return r.error();
  }
  if (auto r = note(spare_name(s) + ": passed its burn-in (" + verdict->reason + "); held"); !r) {
    return r.error();
  }
  return BrainReply{};
}

Result<BrainReply> SparePool::on(const LaunchCompleted& e) {
  const Millis now = clock_.now_ms();
  if (e.result.ok() || e.result.error().kind != ErrorKind::unreachable) {
    if (auto r = store_.mark_action_done(e.outbox_id, now); !r) return r.error();
  }
  if (e.result.ok()) return BrainReply{};
  if (e.result.error().kind == ErrorKind::unreachable) return BrainReply{};  // tried again
  auto found = store_.spare_by_token(e.token);
  if (!found) return found.error();
  if (!*found || !is_live((*found)->state)) return BrainReply{};
  SpareRow s = **found;
  next_try_ms_[s.cluster] = now + kRetryAfterMs;
  if (auto r =
          end_spare(s, SpareState::lost, "its holder did not start: " + e.result.error().message);
      !r) {
    return r.error();
  }
  return BrainReply{};
}

Result<bool> SparePool::observe(const AttemptObserved& e) {
  auto found = store_.spare_by_token(e.token);
  if (!found) return found.error();
  if (!*found || !is_live((*found)->state)) return false;
  SpareRow s = **found;
  const Millis now = clock_.now_ms();
  if (e.phase == RunPhase::running && s.state == SpareState::holding) {
    s.state = SpareState::ready;
    s.ready_ms = now;
    if (auto r = store_.update_spare(s); !r) return r.error();
    if (auto r = note(spare_name(s) + ": ready"); !r) return r.error();
    return true;
  }
  const bool gone =
      e.phase == RunPhase::exited || (e.phase == RunPhase::unknown && s.state == SpareState::ready);
  if (!gone) return false;
  std::string why = "its holder ended";
  if (e.exit) {
    if (e.exit->node_lost) why = "its node was lost";
    if (!e.exit->detail.empty()) why += " (" + e.exit->detail + ")";
  } else if (e.phase == RunPhase::unknown) {
    why = "the site no longer knows its holder";
  }
  next_try_ms_[s.cluster] = now + kRetryAfterMs;
  if (auto r = end_spare(s, SpareState::lost, why); !r) return r.error();
  return false;
}

Result<BrainReply> SparePool::on(const CancelCompleted& e) {
  // A holder cancelled; one the site did not answer for is carried out again.
  if (!e.result.ok() && e.result.error().kind == ErrorKind::unreachable) return BrainReply{};
  if (auto r = store_.mark_action_done(e.outbox_id, clock_.now_ms()); !r) return r.error();
  return BrainReply{};
}

// ---- hand-over and release ---------------------------------------------------------------

Result<void> SparePool::take(const std::string& cluster, const std::vector<std::string>& nodes,
                             JobId job, int attempt_no) {
  if (nodes.empty()) return Ok{};
  auto live = store_.live_spares(cluster);
  if (!live) return live.error();
  for (SpareRow s : *live) {
    if (std::find(nodes.begin(), nodes.end(), s.node) == nodes.end()) continue;
    if (s.state != SpareState::ready) {
      return make_error(ErrorKind::internal, spare_name(s) + " is not ready to be taken");
    }
    s.taken_by = job;
    if (auto r = end_spare(s, SpareState::taken,
                           "taken by job " + std::to_string(job) + " (attempt " +
                               std::to_string(attempt_no) + ")");
        !r) {
      return r;
    }
  }
  return Ok{};
}

Result<void> SparePool::end_spare(SpareRow& s, SpareState to, const std::string& reason) {
  const bool holder = s.state == SpareState::holding || s.state == SpareState::ready;
  s.state = to;
  s.ended_ms = clock_.now_ms();
  s.reason = reason;
  if (auto r = store_.update_spare(s); !r) return r;
  if (holder && to != SpareState::lost) {
    if (auto r = cancel_holder(s); !r) return r;
  }
  return note(spare_name(s) + ": " + std::string(to_string(to)) + ", " + reason);
}

Result<void> SparePool::cancel_holder(const SpareRow& s) {
  auto id = store_.enqueue(action(s, ActionKind::cancel, s.token, nullptr, clock_.now_ms()));
  if (!id) return id.error();
  return Ok{};
}

Result<void> SparePool::note(const std::string& message) {
  return store_.add_event(std::nullopt, std::nullopt, clock_.now_ms(), "spare", message);
}

}  // namespace orch
