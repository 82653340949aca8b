// SchedulerBackend's transfers (issues 5 and 42): a page of the transfers list grouped by purpose
// and job, one transfer, and the bytes copied per minute for the throughput chart.
#include <algorithm>
#include <cmath>
#include <map>

#include "web/backend/json_values.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;

constexpr Millis kMinuteMs = 60'000;

// Bytes per second as MB/s (10^6 bytes): two decimals, or three significant digits below
// 0.1 MB/s (a checkpoint of a few kB copies at a rate that two decimals would call 0); null for
// 0 (none, or not measured).
json mb_s(double bps) {
  if (bps <= 0) return nullptr;
  const double value = bps / 1e6;
  if (value >= 0.1) return std::round(value * 100) / 100.0;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(value)));
  return std::round(value * scale) / scale;
}

// A finished copy's average: the bytes it copied over the time its copy took (the last try's),
// or, without that, over its start to its end. 0 while unknown.
double average_bps(const TransferRow& t) {
  if (t.copy_seconds > 0 && t.copied_bytes > 0) {
    return static_cast<double>(t.copied_bytes) / t.copy_seconds;
  }
  if (t.started_ms && t.ended_ms && *t.ended_ms > *t.started_ms) {
    const auto bytes = t.state == TransferState::done ? t.bytes_total : t.bytes_done;
    return static_cast<double>(bytes) * 1000.0 / static_cast<double>(*t.ended_ms - *t.started_ms);
  }
  return 0;
}

// What one transfer copies: "step 40 of job 3" (a checkpoint), "dataset imagenet", or its
// reason for a job's code ("code 1a2b3c4d5e6f for job 7"); with the checkpoint's job and step.
struct What {
  std::string text;
  std::optional<JobId> job;
  std::optional<std::int64_t> step;
};

// The checkpoints read so far are kept in seen: a page names the same few again and again.
Result<What> transfer_what(StoreReader& store, const TransferRow& t,
                           std::map<std::int64_t, std::optional<CheckpointRow>>& seen) {
  if (!t.checkpoint_id && t.dataset.empty()) {
    return What{t.why.empty() ? std::string("code") : t.why, t.job_id, std::nullopt};
  }
  if (!t.checkpoint_id) return What{"dataset " + t.dataset, t.job_id, std::nullopt};
  auto it = seen.find(*t.checkpoint_id);
  if (it == seen.end()) {
    auto row = store.checkpoint(*t.checkpoint_id);
    if (!row) return row.error();
    it = seen.emplace(*t.checkpoint_id, std::move(*row)).first;
  }
  if (!it->second) {
    return What{"checkpoint " + std::to_string(*t.checkpoint_id), t.job_id, std::nullopt};
  }
  const CheckpointRow& c = *it->second;
  return What{"step " + std::to_string(c.step) + " of job " + std::to_string(c.job_id), c.job_id,
              c.step};
}

// The group a transfer is listed under: its purpose and the job it copies for.
std::string group_key(TransferPurpose purpose, const std::optional<JobId>& job) {
  return std::string(to_string(purpose)) + (job ? "/" + std::to_string(*job) : "");
}

std::string group_label(TransferPurpose purpose, const std::optional<JobId>& job) {
  const std::string of = job ? " of job " + std::to_string(*job) : "";
  switch (purpose) {
    case TransferPurpose::replication:
      return "checkpoint replication" + of;
    case TransferPurpose::staging:
      return job ? "staging for job " + std::to_string(*job) : "staging";
    case TransferPurpose::manual:
      return "manual copies" + of;
  }
  return "transfers";
}

json transfer_json(const TransferRow& t, const What& what) {
  json percent = nullptr;
  if (t.state == TransferState::done || t.state == TransferState::verifying) {
    percent = 100.0;  // copied (verifying: being checked at the destination)
  } else if (t.bytes_total > 0) {
    const double p = 100.0 * static_cast<double>(t.bytes_done) / static_cast<double>(t.bytes_total);
    percent = std::round(std::clamp(p, 0.0, 100.0) * 10) / 10.0;
  }
  const bool running = t.state == TransferState::running;
  // Copied (done, or being checked): the rate is the copy's average, kept once it ends.
  const bool copied = t.state == TransferState::done || t.state == TransferState::verifying;
  return {{"id", t.id},
          {"what", what.text},
          {"purpose", std::string(to_string(t.purpose))},
          {"job", opt(what.job)},
          {"step", opt(what.step)},
          {"group", group_key(t.purpose, what.job)},
          {"checkpoint", opt(t.checkpoint_id)},
          {"dataset", t.dataset.empty() ? json(nullptr) : json(t.dataset)},
          {"from", {{"cluster", t.src_cluster}, {"path", t.src_path}}},
          {"to", {{"cluster", t.dst_cluster}, {"path", t.dst_path}}},
          {"state", std::string(to_string(t.state))},
          {"why", t.why},
          {"bytes_total", t.bytes_total},
          {"bytes_done", t.bytes_done},
          {"percent", percent},
          {"rate_mb_s", running  ? mb_s(t.rate_bps)
                        : copied ? mb_s(average_bps(t))
                                 : json(nullptr)},
          {"average_mb_s", running ? json(nullptr) : mb_s(average_bps(t))},
          {"cap_mb_s", mb_s(t.cap_bps)},
          {"base_cap_mb_s", mb_s(t.base_cap_bps)},
          {"tries", t.tries},
          {"error", t.error},
          {"route", t.route},
          {"created_ms", t.created_ms},
          {"started_ms", opt(t.started_ms)},
          {"ended_ms", opt(t.ended_ms)},
          {"next_try_ms", opt(t.next_try_ms)}};
}

// One group of a page: its transfers' ids, how many are in each state, their bytes, and the
// rate of those running now.
struct Group {
  TransferPurpose purpose;
  std::optional<JobId> job;
  json ids = json::array();
  std::map<std::string, int> states;
  std::int64_t bytes_total = 0;
  std::int64_t bytes_done = 0;
  double rate_bps = 0;
};

json group_json(const Group& g) {
  json states = json::object();
  for (const auto& [state, n] : g.states) states[state] = n;
  return {{"key", group_key(g.purpose, g.job)},
          {"purpose", std::string(to_string(g.purpose))},
          {"job", opt(g.job)},
          {"label", group_label(g.purpose, g.job)},
          {"transfers", g.ids},
          {"states", states},
          {"bytes_total", g.bytes_total},
          {"bytes_done", g.bytes_done},
          {"rate_mb_s", mb_s(g.rate_bps)}};
}

}  // namespace

Result<nlohmann::json> SchedulerBackend::list_transfers(const TransferFilter& filter) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  // One more than asked tells whether another page follows without a second query.
  auto rows = reader.transfer_page(
      filter.all, filter.cursor > 0 ? std::optional<std::int64_t>(filter.cursor) : std::nullopt,
      filter.limit + 1);
  if (!rows) return rows.error();
  const bool more = rows->size() > static_cast<std::size_t>(filter.limit);
  if (more) rows->pop_back();
  std::map<std::int64_t, std::optional<CheckpointRow>> seen;
  std::vector<Group> groups;  // in the order of their newest transfer on the page
  std::map<std::string, std::size_t> group_at;
  json out = json::array();
  for (const auto& t : *rows) {
    auto what = transfer_what(reader, t, seen);
    if (!what) return what.error();
    out.push_back(transfer_json(t, *what));
    const std::string key = group_key(t.purpose, what->job);
    auto [at, added] = group_at.emplace(key, groups.size());
    if (added) groups.push_back(Group{t.purpose, what->job});
    Group& g = groups[at->second];
    g.ids.push_back(t.id);
    g.states[std::string(to_string(t.state))] += 1;
    g.bytes_total += t.bytes_total;
    g.bytes_done += t.state == TransferState::done ? t.bytes_total : t.bytes_done;
    if (t.state == TransferState::running) g.rate_bps += t.rate_bps;
  }
  json listed = json::array();
  for (const Group& g : groups) listed.push_back(group_json(g));
  return json{
      {"groups", listed},
      {"transfers", out},
      {"next", more && !rows->empty() ? json(std::to_string(rows->back().id)) : json(nullptr)}};
}

Result<nlohmann::json> SchedulerBackend::get_transfer(std::int64_t id) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto row = reader.transfer(id);
  if (!row) return row.error();
  if (!*row) return make_error(ErrorKind::not_found, "no transfer with id " + std::to_string(id));
  std::map<std::int64_t, std::optional<CheckpointRow>> seen;
  auto what = transfer_what(reader, **row, seen);
  if (!what) return what.error();
  return transfer_json(**row, *what);
}

Result<nlohmann::json> SchedulerBackend::transfer_throughput(int minutes) {
  const std::int64_t now_minute = clock_.now_ms() / kMinuteMs;
  const std::int64_t first = now_minute - std::max(1, minutes) + 1;
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  auto rows = (*lease)->transfer_minutes(first);
  if (!rows) return rows.error();
  std::map<std::int64_t, std::int64_t> bytes(rows->begin(), rows->end());
  // Every minute of the window, those with no copy at 0: the chart shows the quiet ones too.
  json points = json::array();
  std::int64_t total = 0;
  for (std::int64_t m = first; m <= now_minute; ++m) {
    const auto it = bytes.find(m);
    const std::int64_t b = it == bytes.end() ? 0 : it->second;
    total += b;
    points.push_back({{"at_ms", m * kMinuteMs},
                      {"bytes", b},
                      {"bytes_per_s", std::round(static_cast<double>(b) / 60.0 * 100) / 100.0}});
  }
  return json{
      {"bucket_s", 60}, {"minutes", std::max(1, minutes)}, {"bytes", total}, {"points", points}};
}

}  // namespace orch
