#include "web/backend/scheduler_backend.h"

#include <algorithm>

#include "scheduler/brain/node_standing.h"
#include "scheduler/brain/site_capacity.h"
#include "scheduler/lifecycle/attempt_recovery.h"
#include "scheduler/lifecycle/job_stats.h"
#include "scheduler/lifecycle/mfu.h"
#include "scheduler/model/json_text.h"
#include "scheduler/spec/job_spec_parser.h"
#include "scheduler/spec/spec_position.h"
#include "scheduler/spec/submission_rules.h"
#include "web/backend/json_values.h"

namespace orch {
namespace {

using nlohmann::json;

// Where the seconds went between the end of `prev` (interrupted) and attempt `a`'s first
// progress line; null for a first attempt or one that followed nothing that ended.
json recovery_json(const AttemptRow& a, const AttemptRow* prev) {
  if (prev == nullptr) return nullptr;
  const auto recovery = recovery_between(*prev, a);
  if (!recovery) return nullptr;
  const RecoveryBreakdown& b = *recovery;
  return {{"after", to_string(prev->cause)}, {"detection_s", opt(b.detection_s)},
          {"backoff_s", b.backoff_s},        {"placing_s", b.placing_s},
          {"site_s", opt(b.site_s)},         {"startup_s", opt(b.startup_s)},
          {"total_s", opt(b.total_s)},       {"text", recovery_text(b)}};
}

json attempt_json(const AttemptRow& a, const AttemptRow* prev) {
  json resumed = nullptr;
  // An attempt that never launched resumed from nothing (issue 42), whatever it was planned to.
  if (a.resumed_from_step && a.not_launched.empty())
    resumed = {{"step", *a.resumed_from_step}, {"path", a.resumed_from_path}};
  return {{"no", a.no},
          {"cluster", a.cluster},
          {"token", a.token},
          {"state", to_string(a.state)},
          {"cause", to_string(a.cause)},
          {"exit_code", opt(a.exit_code)},
          {"signal", opt(a.signal)},
          {"site_job_id", a.site_job_id},
          {"nodes", a.nodes},
          // The node whose task failed first, when the site named it; null otherwise.
          {"failed_node", a.failed_node.empty() ? json(nullptr) : json(a.failed_node)},
          // What failed (lifecycle/error_excerpt.h): lines joined with "\n"; "" when none.
          {"error_excerpt", a.error_excerpt},
          // Why it was stopped before it launched (issue 42); "" for one that launched.
          {"not_launched", a.not_launched},
          {"gpus", a.gpus},
          {"started_ms", a.started_ms},
          {"running_ms", opt(a.running_ms)},
          {"ended_ms", opt(a.ended_ms)},
          // Its last sign of life before the verdict that ended it (the scorecard's detection).
          {"last_alive_ms", opt(a.last_alive_ms)},
          // When its backoff ended (a resumed attempt) and its first progress line was seen.
          {"due_ms", opt(a.due_ms)},
          {"first_progress_ms", opt(a.first_progress_ms)},
          {"recovery", recovery_json(a, prev)},
          {"resumed_from", resumed},
          {"first_step", opt(a.first_step)},
          {"last_step", opt(a.last_step)},
          {"mfu", opt(a.mfu)},
          // Why its MFU is not a measurement (lifecycle/mfu.h); "" when fine.
          {"mfu_flag", a.mfu_flag},
          {"steps_lost", a.steps_lost}};
}

}  // namespace

SchedulerBackend::SchedulerBackend(std::unique_ptr<ReaderPool> readers, BrainLoop& loop,
                                   const std::vector<ClusterSpec>& clusters,
                                   std::map<std::string, ClusterPort*> ports, const Clock& clock)
    : readers_(std::move(readers)),
      loop_(loop),
      clusters_(clusters),
      ports_(std::move(ports)),
      clock_(clock),
      histories_(clusters_) {}

SchedulerBackend::SchedulerBackend(std::unique_ptr<StoreReader> reader, BrainLoop& loop,
                                   const std::vector<ClusterSpec>& clusters,
                                   std::map<std::string, ClusterPort*> ports, const Clock& clock)
    : SchedulerBackend(std::make_unique<ReaderPool>(std::move(reader)), loop, clusters,
                       std::move(ports), clock) {}

namespace {

// A cluster's hot spares (issue 38): how many it asks for, each live one's node and state, and
// what they have cost (GPU-hours held idle) and done.
Result<json> spares_json(StoreReader& reader, const ClusterSpec& c, Millis now, int& gpus_held,
                         int& gpus_at_site) {
  auto live = reader.live_spares(c.name);
  if (!live) return live.error();
  auto totals = reader.spare_totals(c.name, now);
  if (!totals) return totals.error();
  json nodes = json::array();
  int ready = 0;
  for (const auto& s : *live) {
    gpus_held += s.gpus;
    if (s.state == SpareState::ready) {
      ++ready;
      gpus_at_site += s.gpus;
    }
    nodes.push_back({{"node", s.node},
                     {"state", std::string(to_string(s.state))},
                     {"since_ms", s.ready_ms.value_or(s.held_ms.value_or(s.created_ms))}});
  }
  return json{{"wanted", c.spares},     {"ready", ready},
              {"nodes", nodes},         {"gpu_hours_idle", totals->gpu_hours},
              {"taken", totals->taken}, {"failed_burn_in", totals->failed},
              {"lost", totals->lost}};
}

// Every filter that refused a cluster (issue 42): each stored "name: reason" split at its first
// ": " (filter names have none).
json refused_by_json(const std::vector<std::string>& refusals) {
  json out = json::array();
  for (const auto& r : refusals) {
    const auto colon = r.find(": ");
    out.push_back(colon == std::string::npos
                      ? json{{"filter", ""}, {"reason", r}}
                      : json{{"filter", r.substr(0, colon)}, {"reason", r.substr(colon + 2)}});
  }
  return out;
}

// A feasible cluster's goodput and what it costs (issue 45): the expected useful FLOP/s judged
// alone, the price of a GPU-hour there (null in a fleet without prices; price_assumed when the
// cluster has none and was judged at the dearest priced one's), and the useful FLOP a unit of
// money buys there (null without a price of its own).
void add_cost_fields(json& verdict, const ScoreNote& n) {
  const bool scored = n.kind == ScoreNote::Kind::goodput;
  const bool priced = scored && n.priced != ScoreNote::Priced::none;
  verdict["goodput_flops"] = scored ? json(n.flops) : json(nullptr);
  verdict["price_per_gpu_hour"] = priced ? json(n.price_per_gpu_hour) : json(nullptr);
  verdict["price_assumed"] = n.priced == ScoreNote::Priced::assumed;
  verdict["currency"] = priced ? json(n.currency) : json(nullptr);
  verdict["goodput_per_cost"] =
      priced && n.flop_per_money > 0 ? json(n.flop_per_money) : json(nullptr);
}

// The objective that ranked the clusters, as their goodput notes say; null when none was scored.
json objective_of(const std::vector<PlacementVerdictRow>& verdicts) {
  for (const auto& v : verdicts) {
    if (v.goodput.kind != ScoreNote::Kind::goodput) continue;
    return v.goodput.per_cost ? "goodput_per_cost" : "goodput";
  }
  return nullptr;
}

// The preemptions a decision considered on a cluster, taken or not, and why (issue 42).
json preemptions_json(const std::vector<PreemptionNote>& notes) {
  json out = json::array();
  for (const auto& n : notes) {
    out.push_back({{"job_id", n.victim.job},
                   {"job_name", n.victim.job_name},
                   {"team", n.victim.team},
                   {"gpus", n.victim.gpus},
                   {"taken", n.taken},
                   {"why", n.why}});
  }
  return out;
}

}  // namespace

Result<nlohmann::json> SchedulerBackend::list_clusters() {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto rows = reader.clusters();
  if (!rows) return rows.error();
  auto live = reader.live_attempts(std::nullopt);
  if (!live) return live.error();
  auto in_use = reader.gpus_in_use();
  if (!in_use) return in_use.error();
  json out = json::array();
  for (const auto& c : clusters_.snapshot()) {
    int used = 0;
    for (const auto& a : *live) {
      if (a.cluster == c.name) used += a.gpus;
    }
    // Ours that the site's own count of busy GPUs includes, as placement counts them.
    const auto ours = in_use->find(c.name);
    const int at_site = ours == in_use->end() ? 0 : ours->second.at_site;
    std::string health = "healthy";
    std::string message;
    Admission admission = Admission::active;
    std::optional<Millis> delivered;
    std::string admission_reason;
    for (const auto& r : *rows) {
      if (r.name == c.name) {
        health = std::string(to_string(r.health));
        message = r.message;
        admission = r.admission;
        delivered = r.delivered_ms;
        admission_reason = r.admission_reason;
      }
    }
    auto nodes = reader.nodes(c.name);
    if (!nodes) return nodes.error();
    json node_list = json::array();
    int healthy_nodes = 0;
    for (const auto& n : *nodes) {
      healthy_nodes += n.healthy ? 1 : 0;
      node_list.push_back({{"name", n.name},
                           {"gpus", n.gpus},
                           {"gpus_busy", n.gpus_busy},
                           {"cpus", n.cpus},
                           {"memory_mb", n.memory_mb},
                           {"healthy", n.healthy},
                           {"reason", n.reason}});
    }
    int spare_gpus = 0;
    int spares_at_site = 0;
    auto spares = spares_json(reader, c, clock_.now_ms(), spare_gpus, spares_at_site);
    if (!spares) return spares.error();
    auto peak = c.peak_flops_per_gpu();
    out.push_back(
        {{"name", c.name},
         {"vendor", c.vendor_or_name()},
         {"provider", c.provider},
         {"nodes", c.nodes},
         {"gpus_per_node", c.gpus_per_node},
         {"accelerator", c.accelerator},
         {"peak_tflops", peak ? json(*peak / 1e12) : json(nullptr)},
         {"health", health},
         {"admission", std::string(to_string(admission))},
         {"admission_reason", admission_reason},
         {"promised_ms", opt(c.delivery.promised_ms)},
         {"delivered_ms", opt(delivered)},
         {"gpus_total", c.total_gpus()},
         {"gpus_used", used},
         {"gpus_spare", spare_gpus},
         {"gpus_foreign", foreign_gpus(*nodes, c.gpus_per_node, at_site + spares_at_site)},
         {"spares", *spares},
         {"nodes_healthy", healthy_nodes},
         {"node_list", node_list},
         {"message", message}});
  }
  return json{{"clusters", out}};
}

Result<nlohmann::json> SchedulerBackend::cluster_nodes(const std::string& cluster,
                                                       int event_limit) {
  const ClusterSpec* spec = clusters_.find(cluster);
  if (spec == nullptr) {
    return make_error(ErrorKind::not_found, "no cluster named \"" + cluster + "\"");
  }
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto nodes = reader.nodes(cluster);
  if (!nodes) return nodes.error();
  auto events = reader.node_events(cluster, std::nullopt, event_limit);
  if (!events) return events.error();
  auto rates = cluster_rate_verdicts(reader, cluster, clock_.now_ms());
  if (!rates) return rates.error();
  json node_list = json::array();
  for (const auto& n : *nodes) {
    auto standing = node_standing(reader, *spec, n, (*rates)[n.name]);
    if (!standing) return standing.error();
    json row = {{"name", n.name},          {"gpus", n.gpus},
                {"healthy", n.healthy},    {"reason", n.reason},
                {"updated_ms", n.seen_ms}, {"state", std::string(to_string(n.state))}};
    row.update(*standing);
    node_list.push_back(std::move(row));
  }
  json event_list = json::array();
  for (const auto& e : *events) {
    event_list.push_back({{"id", e.id},
                          {"at_ms", e.at_ms},
                          {"node", e.node},
                          {"kind", e.kind},
                          {"message", e.message},
                          {"job_id", opt(e.job_id)},
                          {"attempt_no", opt(e.attempt_no)},
                          {"incident", e.incident}});
  }
  return json{{"cluster", cluster}, {"nodes", node_list}, {"events", event_list}};
}

Result<JobRow> SchedulerBackend::find_job(StoreReader& reader, std::int64_t id,
                                          nlohmann::json* spec) {
  auto job = reader.job_listing(id, spec);
  if (!job) return job.error();
  if (!*job) return make_error(ErrorKind::not_found, "no job with id " + std::to_string(id));
  return **job;
}

Result<ReaderPool::Lease> SchedulerBackend::job_reader(std::int64_t id) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  if (auto j = find_job(**lease, id); !j) return j.error();
  return lease;
}

Result<nlohmann::json> SchedulerBackend::job_attempts(std::int64_t id) {
  auto lease = job_reader(id);
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto attempts = reader.attempts_of(id);
  if (!attempts) return attempts.error();
  json out = json::array();
  const AttemptRow* prev = nullptr;
  for (const auto& a : *attempts) {
    out.push_back(attempt_json(a, prev));
    prev = &a;
  }
  return json{{"attempts", out}};
}

Result<nlohmann::json> SchedulerBackend::job_events(std::int64_t id) {
  auto lease = job_reader(id);
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto events = reader.events_of(id);
  if (!events) return events.error();
  json out = json::array();
  for (const auto& e : *events) {
    out.push_back({{"at_ms", e.at_ms},
                   {"kind", e.kind},
                   {"message", e.message},
                   {"attempt_no", opt(e.attempt_no)}});
  }
  return json{{"events", out}};
}

Result<nlohmann::json> SchedulerBackend::explain_job(std::int64_t id) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  json spec;
  auto j = find_job(reader, id, &spec);
  if (!j) return j.error();
  auto verdicts = reader.verdicts_of(id);
  if (!verdicts) return verdicts.error();
  // A flagged MFU (lifecycle/mfu.h) is kept out of placement: explain says so, and why.
  auto attempts = reader.attempts_of(id);
  if (!attempts) return attempts.error();
  // What its checkpoint advice stands on (issue 42): null while it was never placed.
  auto advice = checkpoint_advice(reader, *j, attempts->empty() ? nullptr : &attempts->back());
  if (!advice) return advice.error();
  json clusters = json::array();
  json chosen = nullptr;
  Millis at = 0;
  for (const auto& v : *verdicts) {
    if (v.chosen) chosen = v.cluster;
    at = std::max(at, v.at_ms);
    clusters.push_back({{"cluster", v.cluster},
                        {"feasible", v.feasible},
                        {"reason", v.reason},
                        {"score", opt(v.score)},
                        {"refused_by", refused_by_json(v.refused_by)},
                        {"preemptions", preemptions_json(v.preemptions)},
                        {"preemptions_more", v.preemptions_more}});
    add_cost_fields(clusters.back(), v.goodput);
  }
  // Preemption decisions about this job, made for it or of it, and the GPUs held for it
  // (backfill) (issue 18).
  auto events = reader.events_of(id);
  if (!events) return events.error();
  json preemption = json::array();
  for (const auto& e : *events) {
    if (e.kind != "preemption" && e.kind != "preempting" && e.kind != "preempted" &&
        e.kind != "preemption-called-off" && e.kind != "holding") {
      continue;
    }
    preemption.push_back({{"at_ms", e.at_ms}, {"kind", e.kind}, {"message", e.message}});
  }
  return json{{"job_id", id},
              {"state", to_string(j->state)},
              {"reason", j->reason},
              {"priority", spec.is_object() ? spec.value("priority", 0) : 0},
              {"priority_class", spec.is_object() ? spec.value("priority_class", "") : ""},
              {"evaluated_at_ms", verdicts->empty() ? json(nullptr) : json(at)},
              {"chosen", chosen},
              {"objective", objective_of(*verdicts)},
              {"clusters", clusters},
              {"preemption", preemption},
              {"mfu_flag", newest_mfu_flag(*attempts)},
              {"advice_basis", advice->is_object() ? (*advice)["basis"] : json(nullptr)}};
}

Result<nlohmann::json> SchedulerBackend::submit_job(const std::string& body,
                                                    const std::string& source,
                                                    const Submitter& who) {
  auto spec = parse_job_spec(body, source);
  if (!spec) return spec.error();
  spec->owner = who.user;  // whatever the document says: the caller is the owner
  // What is refused after parsing says where in the document, as the parser does.
  auto at = [&](const Error& e) { return locate_error(e, body, source); };
  // The team first (a user's default is its token's first team): the secrets' grants follow it.
  if (auto bound = bind_team(*spec, who); !bound) return at(bound.error());
  if (auto bound = bind_workdir(*spec, who); !bound) return at(bound.error());
  // A secret that does not exist or is not granted to the job's team is the submitter's to fix
  // now, not a launch failure later.
  if (!spec->secret_env.empty()) {
    auto secrets = registry();
    if (!secrets) return secrets.error();
    if (auto ok = (*secrets)->check(spec->secret_env, spec->team); !ok) return at(ok.error());
  }
  auto reply = loop_.call(SubmitJob{*spec, who});
  if (!reply) return at(reply.error());
  json out{{"id", reply->job_id}, {"name", spec->name}, {"state", reply->state}};
  if (!spec->sweep.empty()) {
    // A sweep: every point's job, in point order (named <name>-1, <name>-2, ...).
    out["group"] = spec->group;
    out["jobs"] = json::array();
    for (const auto& j : reply->jobs) {
      out["jobs"].push_back({{"id", j.id}, {"name", j.name}, {"state", j.state}});
    }
    out["name"] = reply->jobs.front().name;
  }
  return out;
}

Result<nlohmann::json> SchedulerBackend::cancel_job(std::int64_t id,
                                                    const std::string& only_owner) {
  if (!only_owner.empty()) {
    auto lease = job_reader(id);
    if (!lease) return lease.error();
    auto job = find_job(**lease, id, nullptr);
    if (!job) return job.error();
    if (job->spec.owner != only_owner) {
      return make_error(
          ErrorKind::forbidden,
          only_owner + " may cancel only their own jobs; job " + std::to_string(id) + " is " +
              (job->spec.owner.empty() ? std::string("nobody's (submitted before owners were kept)")
                                       : job->spec.owner + "'s") +
              " (an operator may cancel any job)");
    }
  }
  auto reply = loop_.call(CancelJob{id});
  if (!reply) return reply.error();
  return json{{"id", reply->job_id}, {"state", reply->state}};
}

Result<std::string> SchedulerBackend::job_logs(std::int64_t id, const LogRequest& request) {
  std::vector<AttemptRow> attempts;
  {
    auto lease = job_reader(id);
    if (!lease) return lease.error();
    auto a = (*lease)->attempts_of(id);
    if (!a) return a.error();
    attempts = std::move(*a);
  }
  if (attempts.empty()) return std::string();  // not placed yet: no output
  const AttemptRow* chosen = &attempts.back();
  if (request.attempt_no) {
    chosen = nullptr;
    for (const auto& a : attempts) {
      if (a.no == *request.attempt_no) chosen = &a;
    }
    if (!chosen) {
      return make_error(ErrorKind::not_found, "job " + std::to_string(id) + " has no attempt " +
                                                  std::to_string(*request.attempt_no) +
                                                  " (it has " + std::to_string(attempts.size()) +
                                                  ")");
    }
  }
  ClusterPort* port = port_of(chosen->cluster);
  if (port == nullptr) {
    return make_error(ErrorKind::not_found, "cluster " + chosen->cluster + " is not configured");
  }
  auto out = port->read_output(chosen->token, request.offset, request.max_bytes);
  if (!out && out.error().kind == ErrorKind::not_found && !chosen->launch_done) {
    return std::string();  // launch still on its way: no output yet
  }
  return out;
}

Result<nlohmann::json> SchedulerBackend::set_cluster_outage(const std::string& cluster, bool down) {
  ClusterPort* port = port_of(cluster);
  if (port == nullptr) {
    return make_error(ErrorKind::not_found, "no cluster named \"" + cluster + "\"");
  }
  if (auto r = port->set_outage(down); !r) return r.error();
  return json{{"cluster", cluster}, {"down", down}};
}

ClusterPort* SchedulerBackend::port_of(const std::string& cluster) const {
  std::lock_guard<std::mutex> lock(ports_mu_);
  auto it = ports_.find(cluster);
  return it == ports_.end() ? nullptr : it->second;
}

void SchedulerBackend::cluster_joined(const ClusterSpec& spec, ClusterPort* port) {
  {
    std::lock_guard<std::mutex> lock(ports_mu_);
    ports_[spec.name] = port;
  }
  clusters_.add({spec});
}

}  // namespace orch
