// SchedulerBackend's health methods (issue 4): nodes and their standing, quarantine and release
// through the brain, burn-in and probes, the provider scorecards and MFU history from the store,
// and the checkpoint advice of `job show`.
#include <algorithm>
#include <cmath>

#include "scheduler/brain/cluster_history.h"
#include "scheduler/brain/node_standing.h"
#include "scheduler/health/checkpoint_plan.h"
#include "scheduler/health/goodput.h"
#include "scheduler/health/scorecard.h"
#include "scheduler/health/spares_advice.h"
#include "scheduler/lifecycle/mfu.h"
#include "web/backend/json_values.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;

// The history window of the checkpoint advice: the one the brain's placement uses.
constexpr Millis kDayMs = 24LL * 3600 * 1000;

Error no_cluster(const std::string& cluster) {
  return make_error(ErrorKind::not_found, "no cluster named \"" + cluster + "\"");
}

json node_json(const NodeRow& n) {
  return {{"cluster", n.cluster},
          {"name", n.name},
          {"gpus", n.gpus},
          {"gpus_busy", n.gpus_busy},
          {"healthy", n.healthy},
          {"reason", n.reason},
          {"state", std::string(to_string(n.state))},
          {"quarantines", n.quarantines},
          {"quarantined_at_ms", opt(n.quarantined_at_ms)},
          {"state_reason", n.state_reason},
          {"seen_ms", n.seen_ms}};
}

json probe_json(const ProbeRow& p) {
  json result = nullptr;
  if (!p.raw.empty()) {
    result = json::parse(p.raw, nullptr, false);
    if (result.is_discarded()) result = p.raw;  // shown as it came rather than lost
  }
  return {{"id", p.id},
          {"cluster", p.cluster},
          {"node", p.node},
          {"round", p.token},
          {"at_ms", p.at_ms},
          {"passed", p.passed},
          {"reason", p.reason},
          {"gemm_gflops", opt(p.gemm_gflops)},
          {"write_mb_s", opt(p.write_mb_s)},
          {"read_mb_s", opt(p.read_mb_s)},
          {"result", result}};
}

json card_json(const Scorecard& c) {
  return {{"name", c.name},
          {"kind", c.kind},
          {"clusters", c.clusters},
          {"availability", c.availability},
          {"gpu_hours", c.gpu_hours},
          {"interruptions", c.interruptions},
          {"interruptions_per_1k_gpu_h", opt(c.interruptions_per_1k_gpu_h)},
          {"node_mtbf_h", opt(c.node_mtbf_h)},
          {"detection_median_s", opt(c.detection_median_s)},
          {"detection_p95_s", opt(c.detection_p95_s)},
          {"recovery_median_s", opt(c.recovery_median_s)},
          {"recovery_p95_s", opt(c.recovery_p95_s)},
          // The recovery's parts, medians: where its seconds went (recovery_breakdown.h).
          {"backoff_median_s", opt(c.backoff_median_s)},
          {"placing_median_s", opt(c.placing_median_s)},
          {"site_median_s", opt(c.site_median_s)},
          {"startup_median_s", opt(c.startup_median_s)},
          {"median_mfu", opt(c.mfu)},
          {"checkpoint_save_p95_s", opt(c.checkpoint_save_p95_s)},
          {"io_stalls", c.io_stalls},
          {"nodes", c.nodes},
          {"quarantined_nodes", c.quarantined_nodes},
          {"open_tickets", c.open_tickets},
          {"tickets", c.tickets},
          {"ticket_response_median_h", opt(c.ticket_response_median_h)},
          {"ticket_resolution_median_h", opt(c.ticket_resolution_median_h)},
          {"delivery_delay_days", opt(c.delivery_delay_days)},
          {"awaiting_delivery", c.awaiting_delivery},
          {"quarantined_share", c.quarantined_share}};
}

}  // namespace

const ClusterSpec* SchedulerBackend::spec_of(const std::string& cluster) const {
  return clusters_.find(cluster);
}

Result<nlohmann::json> SchedulerBackend::node_standing(StoreReader& reader, const ClusterSpec& spec,
                                                       const NodeRow& n,
                                                       const RateVerdict& rate) const {
  const QuarantinePolicy policy = quarantine_policy(&spec);
  auto counted = counted_failures(reader, spec.name, n.name, policy, clock_.now_ms());
  if (!counted) return counted.error();
  const NodeOutlook o = node_outlook({n.state, n.quarantines, n.quarantined_at_ms},
                                     static_cast<int>(counted->size()), policy);
  return json{{"failures", o.failures},
              {"failures_to_quarantine", o.needed},
              {"window_h", static_cast<double>(policy.window_ms) / 3'600'000.0},
              {"next_failure", o.next},
              // Lemons judged by rate (issue 43): the evidence and the decision it makes.
              {"work_failures", n.work_failures},
              {"work_gpu_hours", rate.gpu_hours},
              {"rate_per_gpu_h", rate.rate},
              {"cluster_rate_per_gpu_h", rate.peer_rate},
              {"rate_ratio", rate.ratio},
              {"rate_p_value", rate.p_value},
              {"lemon", rate.lemon},
              {"count_rule", count_rule_applies(rate.peer_rate, n.gpus, policy)},
              {"rate_evidence", rate.evidence}};
}

Result<nlohmann::json> SchedulerBackend::list_nodes(const NodeFilter& filter) {
  std::optional<NodeState> state;
  if (filter.state) {
    state = parse_node_state(*filter.state);
    if (!state) {
      return make_error(ErrorKind::invalid, "unknown node state \"" + *filter.state +
                                                "\"; expected active, quarantined or retired");
    }
  }
  if (filter.cluster && !spec_of(*filter.cluster)) return no_cluster(*filter.cluster);
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  json out = json::array();
  for (const auto& c : clusters_.snapshot()) {
    if (filter.cluster && c.name != *filter.cluster) continue;
    auto nodes = reader.nodes(c.name);
    if (!nodes) return nodes.error();
    auto rates = cluster_rate_verdicts(reader, c.name, clock_.now_ms());
    if (!rates) return rates.error();
    for (const auto& n : *nodes) {
      if (state && n.state != *state) continue;
      auto standing = node_standing(reader, c, n, (*rates)[n.name]);
      if (!standing) return standing.error();
      json row = node_json(n);
      row.update(*standing);
      out.push_back(std::move(row));
    }
  }
  return json{{"nodes", out}};
}

Result<nlohmann::json> SchedulerBackend::set_node_state(const std::string& cluster,
                                                        const std::string& node, bool quarantine,
                                                        const std::string& reason) {
  SetNodeState command{cluster, node, quarantine ? NodeState::quarantined : NodeState::active,
                       reason};
  auto reply = loop_.call(std::move(command));
  if (!reply) return reply.error();
  return json{{"cluster", cluster}, {"node", node}, {"state", reply->state}};
}

Result<nlohmann::json> SchedulerBackend::set_cluster_admission(const std::string& cluster,
                                                               const std::string& to,
                                                               const std::string& reason) {
  auto admission = parse_admission(to);
  if (!admission) {
    return make_error(ErrorKind::invalid,
                      "no admission state \"" + to + "\"; expected draining, active or retired");
  }
  auto reply = loop_.call(SetClusterAdmission{cluster, *admission, reason});
  if (!reply) return reply.error();
  return json{{"cluster", cluster}, {"admission", reply->state}};
}

Result<nlohmann::json> SchedulerBackend::reload_clusters() {
  if (!reload_) {
    return make_error(ErrorKind::unsupported, "this server was started without a clusters file");
  }
  return reload_();
}

Result<nlohmann::json> SchedulerBackend::add_clusters(const std::string& document,
                                                      const std::string& source) {
  if (!add_) {
    return make_error(ErrorKind::unsupported, "this server cannot add clusters while it runs");
  }
  return add_(document, source);
}

Result<nlohmann::json> SchedulerBackend::check_cluster(const std::string& cluster) {
  ClusterPort* port = port_of(cluster);
  if (port == nullptr || !spec_of(cluster)) return no_cluster(cluster);
  std::vector<PreflightCheck> checks = port->preflight();
  auto reply = loop_.call(PreflightObserved{cluster, checks});
  if (!reply) return reply.error();
  json lines = json::array();
  for (const auto& c : checks) {
    lines.push_back({{"name", c.name}, {"ok", c.ok}, {"skipped", c.skipped}, {"why", c.why}});
  }
  return json{{"cluster", cluster},
              {"ok", first_failure(checks) == nullptr},
              {"reason", misconfigured_reason(cluster, checks)},
              {"checks", lines}};
}

Result<nlohmann::json> SchedulerBackend::start_burn_in(const std::string& cluster) {
  auto reply = loop_.call(StartBurnIn{cluster});
  if (!reply) return reply.error();
  // The round's token, so a client can pick its probes out later. Read after the reply: a
  // round that already ended has cleared it (null then).
  json round = nullptr;
  {
    auto lease = readers_->lease();
    if (!lease) return lease.error();
    StoreReader& reader = **lease;
    auto row = reader.cluster(cluster);
    if (row && *row && !(*row)->burn_in_token.empty()) round = (*row)->burn_in_token;
  }
  return json{{"cluster", cluster}, {"admission", reply->state}, {"round", round}};
}

Result<nlohmann::json> SchedulerBackend::cluster_probes(const std::string& cluster,
                                                        const std::string& node, int limit) {
  if (!spec_of(cluster)) return no_cluster(cluster);
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto probes = reader.probes(cluster, node, limit);
  if (!probes) return probes.error();
  if (!node.empty() && probes->empty()) {
    auto known = reader.node(cluster, node);
    if (!known) return known.error();
    if (!*known) {
      return make_error(ErrorKind::not_found,
                        "cluster " + cluster + " has no node \"" + node + "\"");
    }
  }
  json out = json::array();
  for (const auto& p : *probes) out.push_back(probe_json(p));
  return json{{"cluster", cluster}, {"probes", out}};
}

Result<nlohmann::json> SchedulerBackend::provider_report(int window_days) {
  const Millis now = clock_.now_ms();
  const Millis start = now - static_cast<Millis>(window_days) * kDayMs;
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto in = gather_scorecard_inputs(reader, clusters_.snapshot(), now, start);
  if (!in) return in.error();
  // Issue 45: what each cluster's attempts in the window cost, for the cards' money.
  auto costs = attempt_costs_since(reader, start, now);
  if (!costs) return costs.error();
  std::map<std::string, CostSplit> by_cluster;
  for (const auto& c : *costs) by_cluster[c.cluster].add(c.split);
  json cards = json::array();
  for (const auto& c : compute_scorecards(*in)) {
    json card = card_json(c);
    card["cost"] = card_cost(c.clusters, by_cluster);
    cards.push_back(std::move(card));
  }
  return json{{"window_start_ms", start}, {"now_ms", now}, {"cards", cards}};
}

Result<nlohmann::json> SchedulerBackend::job_mfu(std::int64_t id) {
  auto lease = job_reader(id);
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto attempts = reader.attempts_of(id);
  if (!attempts) return attempts.error();
  json out = json::array();
  for (const auto& a : *attempts) {
    auto series = reader.mfu_series(a.id, "", 0);
    if (!series) return series.error();
    json buckets = json::array();
    for (const auto& b : *series) {
      buckets.push_back({{"at_ms", b.bucket_ms}, {"mfu", b.mean()}, {"samples", b.samples}});
    }
    out.push_back({{"no", a.no}, {"cluster", a.cluster}, {"nodes", a.nodes}, {"buckets", buckets}});
  }
  return json{{"job_id", id}, {"attempts", out}};
}

Result<nlohmann::json> SchedulerBackend::checkpoint_advice(StoreReader& reader, const JobRow& job,
                                                           const AttemptRow* last_attempt) {
  if (!last_attempt) return json(nullptr);
  const AttemptRow& last = *last_attempt;
  const ClusterSpec* spec = spec_of(last.cluster);
  if (!spec) return json(nullptr);
  const Millis now = clock_.now_ms();
  auto histories = histories_.get(reader, now);
  if (!histories) return histories.error();
  const auto found = (*histories)->find(spec->name);
  const ClusterHistory history = found == (*histories)->end() ? ClusterHistory{} : found->second;
  const double peak = spec->peak_flops_per_gpu().value_or(0);
  const GoodputEstimate e = estimate_goodput(job.spec.nodes, job.spec.total_gpus(), peak, history);
  // step_time_total covers the attempt's steps first..last (as ETTR counts it).
  std::optional<double> mean_step_s;
  if (last.first_step && last.last_step && *last.last_step >= *last.first_step &&
      last.step_time_total > 0) {
    const double done = static_cast<double>(*last.last_step - *last.first_step + 1);
    mean_step_s = last.step_time_total / done;
  }
  auto steps_in = [&](double interval_s) -> json {
    if (!mean_step_s || interval_s <= 0) return nullptr;
    return std::max<std::int64_t>(1, std::llround(interval_s / *mean_step_s));
  };
  // The planner (issues 19, 45): the ETTR the exact renewal formula expects at intervals around
  // its best (the first order beside it), so that a person sees how flat the optimum is and what
  // a habitual interval costs; and what its MTBF stands on.
  const CheckpointPlan plan = plan_checkpoints(e, history);
  json around = json::array();
  for (const PlanPoint& at : plan.around) {
    around.push_back({{"interval_s", at.interval_s},
                      {"interval_steps", steps_in(at.interval_s)},
                      {"ettr", at.ettr},
                      {"ettr_first_order", at.ettr_first_order}});
  }
  // Hot spares for a gang of this size at this MTBF (issue 38): worth holding while the failures
  // they cover save more GPU-hours than they sit idle.
  const SparesAdvice spares =
      advise_spares(e.job_mtbf_s, job.spec.total_gpus(), job.spec.gpus_per_node,
                    e.restart_s - kHotRestartS, e.restart_s + kSpareBurnInS);
  json spare_options = json::array();
  for (const SparesOption& o : spares.options) {
    spare_options.push_back({{"spares", o.spares},
                             {"covered", o.covered},
                             {"gained_gpu_h_per_day", o.gained_gpu_h_per_day},
                             {"paid_gpu_h_per_day", o.paid_gpu_h_per_day},
                             {"net_gpu_h_per_day", o.net_gpu_h_per_day}});
  }
  return json{{"cluster", spec->name},
              {"basis", advice_basis(history)},
              {"spares",
               {{"recommended", spares.recommended},
                {"failures_per_day", spares.failures_per_day},
                {"hot_restart_s", kHotRestartS},
                {"options", std::move(spare_options)}}},
              {"interval_s", plan.interval_s},
              {"young_interval_s", plan.young_interval_s},
              {"checkpoint_cost_s", e.checkpoint_cost_s},
              {"restart_s", e.restart_s},
              {"job_mtbf_h", e.job_mtbf_s / 3600.0},
              {"mtbf_basis", plan.mtbf_basis},
              {"evidence_node_hours", plan.evidence_node_hours},
              {"node_failures", plan.node_failures},
              {"prior_node_hours", plan.prior_node_hours},
              {"expected_mfu", e.expected_mfu},
              {"ettr", plan.ettr},
              {"ettr_first_order", plan.ettr_first_order},
              {"interval_steps", steps_in(plan.interval_s)},
              {"around", std::move(around)}};
}

}  // namespace orch
