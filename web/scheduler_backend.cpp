#include "web/scheduler_backend.h"
#include "web/json_values.h"

#include "scheduler/lifecycle/job_stats.h"
#include "scheduler/lifecycle/mfu.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

using nlohmann::json;

json attempt_json(const AttemptRow& a) {
  json resumed = nullptr;
  if (a.resumed_from_step)
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
          {"gpus", a.gpus},
          {"started_ms", a.started_ms},
          {"ended_ms", opt(a.ended_ms)},
          {"resumed_from", resumed},
          {"first_step", opt(a.first_step)},
          {"last_step", opt(a.last_step)},
          {"mfu", opt(a.mfu)},
          {"steps_lost", a.steps_lost}};
}

}  // namespace

SchedulerBackend::SchedulerBackend(std::unique_ptr<ReaderPool> readers, BrainLoop& loop,
                                   std::vector<ClusterSpec> clusters,
                                   std::map<std::string, ClusterPort*> ports, const Clock& clock)
    : readers_(std::move(readers)),
      loop_(loop),
      clusters_(std::move(clusters)),
      ports_(std::move(ports)),
      clock_(clock),
      histories_(clusters_) {}

SchedulerBackend::SchedulerBackend(std::unique_ptr<Store> reader, BrainLoop& loop,
                                   std::vector<ClusterSpec> clusters,
                                   std::map<std::string, ClusterPort*> ports, const Clock& clock)
    : SchedulerBackend(std::make_unique<ReaderPool>(std::move(reader)), loop, std::move(clusters),
                       std::move(ports), clock) {}

Result<nlohmann::json> SchedulerBackend::list_clusters() {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  Store& reader = **lease;
  auto rows = reader.clusters();
  if (!rows) return rows.error();
  auto live = reader.live_attempts(std::nullopt);
  if (!live) return live.error();
  json out = json::array();
  for (const auto& c : clusters_) {
    int used = 0;
    for (const auto& a : *live) {
      if (a.cluster == c.name) used += a.gpus;
    }
    std::string health = "healthy";
    std::string message;
    Admission admission = Admission::active;
    for (const auto& r : *rows) {
      if (r.name == c.name) {
        health = std::string(to_string(r.health));
        message = r.message;
        admission = r.admission;
      }
    }
    auto nodes = reader.nodes(c.name);
    if (!nodes) return nodes.error();
    json node_list = json::array();
    int healthy_nodes = 0;
    for (const auto& n : *nodes) {
      healthy_nodes += n.healthy ? 1 : 0;
      node_list.push_back(
          {{"name", n.name}, {"gpus", n.gpus}, {"healthy", n.healthy}, {"reason", n.reason}});
    }
    auto peak = cluster_peak_flops(c);
    out.push_back({{"name", c.name},
                   {"vendor", c.vendor_or_name()},
                   {"provider", c.provider},
                   {"nodes", c.nodes},
                   {"gpus_per_node", c.gpus_per_node},
                   {"accelerator", c.accelerator},
                   {"peak_tflops", peak ? json(*peak / 1e12) : json(nullptr)},
                   {"health", health},
                   {"admission", std::string(to_string(admission))},
                   {"gpus_total", c.total_gpus()},
                   {"gpus_used", used},
                   {"nodes_healthy", healthy_nodes},
                   {"node_list", node_list},
                   {"message", message}});
  }
  return json{{"clusters", out}};
}

Result<nlohmann::json> SchedulerBackend::cluster_nodes(const std::string& cluster,
                                                       int event_limit) {
  bool configured = false;
  for (const auto& c : clusters_) configured = configured || c.name == cluster;
  if (!configured) {
    return make_error(ErrorKind::not_found, "no cluster named \"" + cluster + "\"");
  }
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  Store& reader = **lease;
  auto nodes = reader.nodes(cluster);
  if (!nodes) return nodes.error();
  auto events = reader.node_events(cluster, std::nullopt, event_limit);
  if (!events) return events.error();
  json node_list = json::array();
  for (const auto& n : *nodes) {
    node_list.push_back({{"name", n.name},
                         {"gpus", n.gpus},
                         {"healthy", n.healthy},
                         {"reason", n.reason},
                         {"updated_ms", n.seen_ms}});
  }
  json event_list = json::array();
  for (const auto& e : *events) {
    event_list.push_back({{"id", e.id},
                          {"at_ms", e.at_ms},
                          {"node", e.node},
                          {"kind", e.kind},
                          {"message", e.message},
                          {"job_id", opt(e.job_id)},
                          {"attempt_no", opt(e.attempt_no)}});
  }
  return json{{"cluster", cluster}, {"nodes", node_list}, {"events", event_list}};
}

Result<JobRow> SchedulerBackend::find_job(Store& reader, std::int64_t id, nlohmann::json* spec) {
  auto job = reader.job_listing(id, spec);
  if (!job) return job.error();
  if (!*job) return make_error(ErrorKind::not_found, "no job with id " + std::to_string(id));
  return **job;
}

Result<nlohmann::json> SchedulerBackend::job_json(Store& reader, const JobRow& j, bool with_spec,
                                                  const nlohmann::json* spec) {
  auto attempts = reader.attempts_of(j.id);
  if (!attempts) return attempts.error();
  auto ckpt = reader.latest_checkpoint(j.id);
  if (!ckpt) return ckpt.error();
  json out = job_summary(j, *attempts, ckpt->has_value() ? &**ckpt : nullptr);
  if (with_spec) out["spec"] = spec ? *spec : json(nullptr);
  return out;
}

nlohmann::json SchedulerBackend::job_summary(const JobRow& j,
                                             const std::vector<AttemptRow>& attempts,
                                             const CheckpointRow* ckpt) const {
  JobStats stats = compute_job_stats(attempts, clock_.now_ms());
  const AttemptRow* last = attempts.empty() ? nullptr : &attempts.back();
  json out = {
      {"id", j.id},
      {"name", j.name},
      {"state", to_string(j.state)},
      {"nodes", j.spec.nodes},
      {"gpus_per_node", j.spec.gpus_per_node},
      {"cluster", last ? json(last->cluster) : json(nullptr)},
      {"attempts", attempts.size()},
      {"infra_restarts", j.infra_restarts},
      {"user_restarts", j.user_restarts},
      {"step", last ? opt(last->last_step) : json(nullptr)},
      {"mfu", last ? opt(last->mfu) : json(nullptr)},
      {"steps_lost", stats.steps_lost},
      {"ettr", opt(stats.ettr)},
      {"last_checkpoint", ckpt ? json{{"step", ckpt->step}, {"path", ckpt->path}} : json(nullptr)},
      {"reason", j.reason},
      {"created_ms", j.created_ms},
      {"updated_ms", j.updated_ms}};
  return out;
}

Result<nlohmann::json> SchedulerBackend::list_jobs(const JobFilter& filter) {
  JobQuery query;
  if (filter.state) {
    query.state = parse_job_state(*filter.state);
    if (!query.state) {
      return make_error(ErrorKind::invalid,
                        "unknown job state \"" + *filter.state +
                            "\"; expected pending, placed, running, resuming, staging, "
                            "succeeded, failed or cancelled");
    }
  }
  query.cluster = filter.cluster;
  query.before_id = filter.cursor;
  // One more than asked tells whether another page follows without a second query.
  query.limit = filter.limit + 1;
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  Store& reader = **lease;
  auto jobs = reader.jobs_page(query);
  if (!jobs) return jobs.error();
  const bool more = jobs->size() > static_cast<std::size_t>(filter.limit);
  if (more) jobs->pop_back();
  // Two statements for the whole page, not two per row.
  std::vector<JobId> ids;
  for (const auto& j : *jobs) ids.push_back(j.id);
  auto attempts = reader.attempts_of_jobs(ids);
  if (!attempts) return attempts.error();
  auto ckpts = reader.latest_checkpoints(ids);
  if (!ckpts) return ckpts.error();
  static const std::vector<AttemptRow> kNone;
  json out = json::array();
  for (const auto& j : *jobs) {
    const auto a = attempts->find(j.id);
    const auto c = ckpts->find(j.id);
    out.push_back(job_summary(j, a == attempts->end() ? kNone : a->second,
                              c == ckpts->end() ? nullptr : &c->second));
  }
  json next = more ? json(std::to_string(jobs->back().id)) : json(nullptr);
  return json{{"jobs", out}, {"next", next}};
}

Result<nlohmann::json> SchedulerBackend::get_job(std::int64_t id) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  Store& reader = **lease;
  json spec;
  auto j = find_job(reader, id, &spec);
  if (!j) return j.error();
  auto out = job_json(reader, *j, true, &spec);
  if (!out) return out.error();
  auto attempts = reader.attempts_of(id);
  if (!attempts) return attempts.error();
  auto advice = checkpoint_advice(reader, *j, *attempts);
  if (!advice) return advice.error();
  (*out)["checkpoint_advice"] = std::move(*advice);
  return out;
}

Result<nlohmann::json> SchedulerBackend::job_attempts(std::int64_t id) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  Store& reader = **lease;
  if (auto j = find_job(reader, id); !j) return j.error();
  auto attempts = reader.attempts_of(id);
  if (!attempts) return attempts.error();
  json out = json::array();
  for (const auto& a : *attempts) out.push_back(attempt_json(a));
  return json{{"attempts", out}};
}

Result<nlohmann::json> SchedulerBackend::job_events(std::int64_t id) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  Store& reader = **lease;
  if (auto j = find_job(reader, id); !j) return j.error();
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
  Store& reader = **lease;
  auto j = find_job(reader, id);
  if (!j) return j.error();
  auto verdicts = reader.verdicts_of(id);
  if (!verdicts) return verdicts.error();
  json clusters = json::array();
  json chosen = nullptr;
  Millis at = 0;
  for (const auto& v : *verdicts) {
    if (v.chosen) chosen = v.cluster;
    at = std::max(at, v.at_ms);
    clusters.push_back({{"cluster", v.cluster},
                        {"feasible", v.feasible},
                        {"reason", v.reason},
                        {"score", opt(v.score)}});
  }
  return json{
      {"job_id", id},        {"state", to_string(j->state)},
      {"reason", j->reason}, {"evaluated_at_ms", verdicts->empty() ? json(nullptr) : json(at)},
      {"chosen", chosen},    {"clusters", clusters}};
}

Result<nlohmann::json> SchedulerBackend::submit_job(const std::string& body,
                                                    const std::string& source) {
  auto spec = parse_job_spec(body, source);
  if (!spec) return spec.error();
  auto reply = loop_.call(SubmitJob{*spec});
  if (!reply) return reply.error();
  return json{{"id", reply->job_id}, {"name", spec->name}, {"state", reply->state}};
}

Result<nlohmann::json> SchedulerBackend::cancel_job(std::int64_t id) {
  auto reply = loop_.call(CancelJob{id});
  if (!reply) return reply.error();
  return json{{"id", reply->job_id}, {"state", reply->state}};
}

Result<std::string> SchedulerBackend::job_logs(std::int64_t id, const LogRequest& request) {
  std::vector<AttemptRow> attempts;
  {
    auto lease = readers_->lease();
    if (!lease) return lease.error();
    Store& reader = **lease;
    if (auto j = find_job(reader, id); !j) return j.error();
    auto a = reader.attempts_of(id);
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
  auto port = ports_.find(chosen->cluster);
  if (port == ports_.end()) {
    return make_error(ErrorKind::not_found, "cluster " + chosen->cluster + " is not configured");
  }
  auto out = port->second->read_output(chosen->token, request.offset, request.max_bytes);
  if (!out && out.error().kind == ErrorKind::not_found && !chosen->launch_done) {
    return std::string();  // launch still on its way: no output yet
  }
  return out;
}

Result<nlohmann::json> SchedulerBackend::set_cluster_outage(const std::string& cluster, bool down) {
  auto port = ports_.find(cluster);
  if (port == ports_.end()) {
    return make_error(ErrorKind::not_found, "no cluster named \"" + cluster + "\"");
  }
  if (auto r = port->second->set_outage(down); !r) return r.error();
  return json{{"cluster", cluster}, {"down", down}};
}

}  // namespace orch
