// SchedulerBackend's MetricsApi: the figures of GET /metrics. Totals come from the store's
// tallies; everything else is what is live now (jobs not finished, clusters, nodes, active
// transfers), read through the same answers the REST routes give.
#include <map>
#include <tuple>

#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;

std::optional<double> number_of(const json& job, const char* key) {
  auto it = job.find(key);
  if (it == job.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string text_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<MetricsSnapshot> SchedulerBackend::metrics() {
  MetricsSnapshot s;
  {
    auto lease = readers_->lease();
    if (!lease) return lease.error();
    StoreReader& reader = **lease;
    auto jobs = reader.tallies("job_state");
    if (!jobs) return jobs.error();
    for (const auto& [state, n] : *jobs) {
      if (n > 0) s.jobs_by_state.emplace_back(state, n);
    }
    auto causes = reader.tallies("attempt_cause");
    if (!causes) return causes.error();
    for (const auto& [cause, n] : *causes) {
      if (n > 0) s.attempts_by_cause.emplace_back(cause, n);
    }
    auto copied = reader.tallies("transfer_bytes");
    if (!copied) return copied.error();
    for (const auto& [key, n] : *copied) s.transfer_bytes_done += n;
    auto costs = cost_totals_now(reader);  // issue 45: the tally and the live attempts
    if (!costs) return costs.error();
    for (const auto& c : *costs)
      s.costs.push_back({c.team, c.cluster, c.kind, c.gpu_hours, c.money});
    auto transfers = reader.transfers(true, 1000);
    if (!transfers) return transfers.error();
    for (const auto& t : *transfers) {
      s.transfers.push_back({t.id, t.src_cluster, t.dst_cluster, std::string(to_string(t.state)),
                             t.bytes_done, t.bytes_total, t.rate_bps});
    }
  }

  // Jobs not finished, a page at a time, as GET /jobs shows them.
  for (const char* state : {"pending", "placed", "running", "resuming", "staging"}) {
    JobFilter filter;
    filter.state = state;
    filter.limit = 1000;
    for (;;) {
      auto page = list_jobs(filter);
      if (!page) return page.error();
      const json body = json::parse(page->text, nullptr, false);
      if (!body.is_object()) break;
      for (const json& j : body["jobs"]) {
        MetricsSnapshot::Job job;
        job.id = j.value("id", std::int64_t{0});
        job.name = text_of(j, "name");
        job.state = text_of(j, "state");
        job.cluster = text_of(j, "cluster");
        job.step = number_of(j, "step");
        job.ettr = number_of(j, "ettr");
        job.mfu = number_of(j, "mfu");
        s.live_jobs.push_back(std::move(job));
      }
      if (!body["next"].is_string()) break;
      filter.cursor = std::stoll(body["next"].get<std::string>());
    }
  }

  auto clusters = list_clusters();
  if (!clusters) return clusters.error();
  const std::map<std::string, std::int64_t> answers =
      site_answers_ ? site_answers_() : std::map<std::string, std::int64_t>{};
  const Millis now = clock_.now_ms();
  {
    auto lease = readers_->lease();
    if (!lease) return lease.error();
    for (const json& c : (*clusters)["clusters"]) {
      MetricsSnapshot::Cluster out;
      out.name = text_of(c, "name");
      out.health = text_of(c, "health");
      out.admission = text_of(c, "admission");
      out.gpus_total = c.value("gpus_total", 0);
      out.gpus_used = c.value("gpus_used", 0);
      out.gpus_foreign = c.value("gpus_foreign", 0);
      auto pending = (*lease)->pending_action_count(out.name);
      if (!pending) return pending.error();
      out.pending_actions = *pending;
      auto it = answers.find(out.name);
      if (it != answers.end() && it->second > 0) {
        out.last_answer_age_s = static_cast<double>(std::max<Millis>(0, now - it->second)) / 1000;
      }
      s.clusters.push_back(std::move(out));
    }
  }

  auto nodes = list_nodes(NodeFilter{});
  if (!nodes) return nodes.error();
  std::map<std::pair<std::string, std::string>, std::int64_t> standing;
  for (const json& n : (*nodes)["nodes"]) ++standing[{text_of(n, "cluster"), text_of(n, "state")}];
  for (const auto& [key, count] : standing) s.nodes.push_back({key.first, key.second, count});

  s.brain_queue = static_cast<std::int64_t>(loop_.queued());
  const DurationHistogram::Snapshot times = loop_.event_times();
  s.event_seconds = {times.bounds, times.cumulative, times.sum_seconds, times.count};
  return s;
}

}  // namespace orch
