// GET /jobs and GET /jobs/{id} (JobsApi): a job's row as the list shows it and its page's view
// with the stored spec, each rendered once per revision of the job while no attempt is live.
#include <algorithm>
#include <map>

#include "scheduler/lifecycle/job_stats.h"
#include "scheduler/model/json_text.h"
#include "web/backend/cost_values.h"
#include "web/backend/json_values.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;

// The newest failed attempt's excerpt: what the job's latest failure printed; "" when none.
std::string newest_error_excerpt(const std::vector<AttemptRow>& attempts) {
  for (auto it = attempts.rbegin(); it != attempts.rend(); ++it) {
    if (!it->error_excerpt.empty()) return it->error_excerpt;
  }
  return "";
}

// A job's rendering does not change with time once none of its attempts is live (a live one's
// wall clock, and so the job's ETTR, runs on).
bool clock_free(const std::vector<AttemptRow>& attempts) {
  return std::all_of(attempts.begin(), attempts.end(),
                     [](const AttemptRow& a) { return a.ended_ms.has_value(); });
}

}  // namespace

nlohmann::json SchedulerBackend::job_summary(const JobRow& j,
                                             const std::vector<AttemptRow>& attempts,
                                             const CheckpointRow* ckpt) const {
  JobStats stats = compute_job_stats(attempts, clock_.now_ms());
  const AttemptRow* last = attempts.empty() ? nullptr : &attempts.back();
  json out = {
      {"id", j.id},
      {"name", j.name},
      {"owner", j.spec.owner},
      {"team", j.spec.team},
      {"group", j.spec.group},
      // The values of its sweep point (`LR=1e-4 --seed 1`); "" for a job not in a sweep.
      {"sweep_point", j.spec.sweep_point},
      {"priority", j.spec.priority},
      {"priority_class", j.spec.priority_class},
      {"state", to_string(j.state)},
      {"nodes", j.spec.nodes},
      {"gpus_per_node", j.spec.gpus_per_node},
      {"gpus", j.spec.total_gpus()},
      {"cluster", last ? json(last->cluster) : json(nullptr)},
      // Those that launched: one stopped before its launch was no try (issue 42).
      {"attempts", std::count_if(attempts.begin(), attempts.end(),
                                 [](const AttemptRow& a) { return a.not_launched.empty(); })},
      {"infra_restarts", j.infra_restarts},
      {"user_restarts", j.user_restarts},
      {"step", last ? opt(last->last_step) : json(nullptr)},
      {"mfu", last ? opt(last->mfu) : json(nullptr)},
      {"mfu_flag", newest_mfu_flag(attempts)},
      {"steps_lost", stats.steps_lost},
      {"ettr", opt(stats.ettr)},
      {"last_checkpoint", ckpt ? json{{"step", ckpt->step}, {"path", ckpt->path}} : json(nullptr)},
      {"reason", j.reason},
      {"error_excerpt", newest_error_excerpt(attempts)},
      {"created_ms", j.created_ms},
      {"updated_ms", j.updated_ms}};
  // Issue 45: what its attempts cost, useful and lost (a live one up to now).
  CostSplit cost;
  for (const auto& c : attempt_costs(attempts, price_lookup(), clock_.now_ms())) cost.add(c.split);
  out["cost"] = cost_split_json(cost);
  out["cost"]["currency"] = currency();
  return out;
}

Result<JsonText> SchedulerBackend::list_jobs(const JobFilter& filter) {
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
  query.owner = filter.owner;
  query.team = filter.team;
  query.group = filter.group;
  query.before_id = filter.cursor;
  // One more than asked tells whether another page follows without a second query.
  query.limit = filter.limit + 1;
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto keys = reader.job_page_keys(query);
  if (!keys) return keys.error();
  const bool more = keys->size() > static_cast<std::size_t>(filter.limit);
  if (more) keys->pop_back();

  // Rows rendered at the revision just read are served as they are; the rest are read (three
  // statements for all of them, not three per row) and rendered.
  std::map<JobId, std::string> rows;
  std::vector<JobId> missing;
  for (const JobKey& key : *keys) {
    if (auto hit = listings_.find(key)) {
      rows.emplace(key.id, std::move(*hit));
    } else {
      missing.push_back(key.id);
    }
  }
  if (!missing.empty()) {
    auto jobs = reader.job_listings(missing);
    if (!jobs) return jobs.error();
    auto attempts = reader.attempts_of_jobs(missing);
    if (!attempts) return attempts.error();
    auto ckpts = reader.latest_checkpoints(missing);
    if (!ckpts) return ckpts.error();
    static const std::vector<AttemptRow> kNone;
    for (const auto& j : *jobs) {
      const auto a = attempts->find(j.id);
      const auto c = ckpts->find(j.id);
      const auto& of_job = a == attempts->end() ? kNone : a->second;
      std::string text =
          json_text(job_summary(j, of_job, c == ckpts->end() ? nullptr : &c->second));
      if (clock_free(of_job)) listings_.put({j.id, j.revision}, text);
      rows.emplace(j.id, std::move(text));
    }
  }
  std::string out = "{\"jobs\":[";
  bool first = true;
  for (const JobKey& key : *keys) {
    auto row = rows.find(key.id);
    if (row == rows.end()) continue;  // not read back: cannot happen, jobs are never deleted
    if (!first) out += ',';
    first = false;
    out += row->second;
  }
  out += "],\"next\":";
  out += more ? "\"" + std::to_string(keys->back().id) + "\"" : std::string("null");
  out += '}';
  return JsonText{std::move(out)};
}

JsonText SchedulerBackend::with_advice(const JobView& view, const nlohmann::json& advice) {
  return JsonText{view.open_text + ",\"checkpoint_advice\":" + json_text(advice) + "}"};
}

Result<JsonText> SchedulerBackend::get_job(std::int64_t id) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto key = reader.job_key(id);
  if (!key) return key.error();
  if (!*key) return make_error(ErrorKind::not_found, "no job with id " + std::to_string(id));
  std::optional<JobView> view = views_.find(**key);
  if (!view) {
    auto rendered = job_view(reader, id);
    if (!rendered) return rendered.error();
    view = std::move(*rendered);
  }
  auto advice =
      checkpoint_advice(reader, view->job, view->last_attempt ? &*view->last_attempt : nullptr);
  if (!advice) return advice.error();
  return with_advice(*view, *advice);
}

Result<SchedulerBackend::JobView> SchedulerBackend::job_view(StoreReader& reader, std::int64_t id) {
  json spec;
  auto j = find_job(reader, id, &spec);
  if (!j) return j.error();
  auto attempts = reader.attempts_of(id);
  if (!attempts) return attempts.error();
  auto ckpt = reader.latest_checkpoint(id);
  if (!ckpt) return ckpt.error();
  json out = job_summary(*j, *attempts, ckpt->has_value() ? &**ckpt : nullptr);
  out["spec"] = std::move(spec);
  JobView view{json_text(out), *j, std::nullopt};
  view.open_text.pop_back();  // the object's closing brace: the advice goes before it
  if (!attempts->empty()) view.last_attempt = attempts->back();
  if (clock_free(*attempts)) views_.put({j->id, j->revision}, view);
  return view;
}

}  // namespace orch
