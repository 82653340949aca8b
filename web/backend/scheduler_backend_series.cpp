// SchedulerBackend: a job's run as a series (GET /api/v1/jobs/{id}/series, issue 41). Each
// attempt's buckets (store_series.cpp) are merged at read time so that the answer holds at most
// max_points points over all attempts together, shared in proportion to each attempt's buckets;
// a point keeps the lowest and highest loss of its steps, so a single step's spike survives.
#include <algorithm>
#include <map>

#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json point_json(const SeriesPoint& p) {
  return {{"step", p.last_step},
          {"first_step", p.first_step},
          {"last_step", p.last_step},
          {"at_ms", p.at_ms},
          {"loss", or_null(p.loss)},
          {"loss_min", or_null(p.loss_min)},
          {"loss_max", or_null(p.loss_max)},
          {"tokens_per_s", or_null(p.tokens_per_s)},
          {"step_time_s", or_null(p.step_time_s)},
          {"mfu", or_null(p.mfu)}};
}

// The job's checkpoints when there are at most max_points, else max_points of them spread
// evenly (the last one kept).
json checkpoints_json(const std::vector<SeriesCheckpoint>& all, int max_points) {
  json out = json::array();
  const std::size_t n = all.size();
  const std::size_t keep = std::min(n, static_cast<std::size_t>(max_points));
  for (std::size_t i = 0; i < keep; ++i) {
    const SeriesCheckpoint& c = all[keep == n ? i : (i + 1) * n / keep - 1];
    out.push_back({{"step", c.step}, {"attempt", c.attempt_no}, {"at_ms", c.at_ms}});
  }
  return out;
}

}  // namespace

std::vector<std::int64_t> share_series_points(const std::vector<std::int64_t>& buckets,
                                              std::int64_t max_points) {
  std::int64_t total = 0;
  for (std::int64_t b : buckets) total += std::max<std::int64_t>(0, b);
  std::vector<std::int64_t> share(buckets.size(), 0);
  if (total <= max_points) {
    for (std::size_t i = 0; i < buckets.size(); ++i)
      share[i] = std::max<std::int64_t>(0, buckets[i]);
    return share;
  }
  std::int64_t left = max_points;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    share[i] = max_points * std::max<std::int64_t>(0, buckets[i]) / total;
    left -= share[i];
  }
  // What rounding left over: first to attempts it left with nothing, then one more each.
  for (int pass = 0; pass < 2 && left > 0; ++pass) {
    for (std::size_t i = 0; i < buckets.size() && left > 0; ++i) {
      if (share[i] < buckets[i] && (pass == 1 || share[i] == 0)) {
        ++share[i];
        --left;
      }
    }
  }
  return share;
}

Result<nlohmann::json> SchedulerBackend::job_series(std::int64_t id, int max_points) {
  if (max_points < kMinSeriesPoints || max_points > kMaxSeriesPoints) {
    return make_error(ErrorKind::invalid, "points must be " + std::to_string(kMinSeriesPoints) +
                                              " to " + std::to_string(kMaxSeriesPoints));
  }
  auto lease = job_reader(id);
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto attempts = reader.attempts_of(id);
  if (!attempts) return attempts.error();
  auto spans = reader.series_spans(id);
  if (!spans) return spans.error();
  std::vector<std::int64_t> buckets;
  for (const SeriesSpan& s : *spans) buckets.push_back(s.buckets());
  const std::vector<std::int64_t> share = share_series_points(buckets, max_points);
  std::map<AttemptId, json> points;
  for (std::size_t i = 0; i < spans->size(); ++i) {
    const SeriesSpan& s = (*spans)[i];
    json list = json::array();
    if (share[i] > 0) {
      const std::int64_t group = (s.buckets() + share[i] - 1) / share[i];
      auto read = reader.series_points(s.attempt_id, s.first_bucket, group);
      if (!read) return read.error();
      for (const SeriesPoint& p : *read) list.push_back(point_json(p));
    }
    points[s.attempt_id] = std::move(list);
  }
  json out = json::array();
  for (const AttemptRow& a : *attempts) {
    auto found = points.find(a.id);
    out.push_back({{"attempt", a.no},
                   {"cluster", a.cluster},
                   {"started_ms", a.started_ms},
                   {"ended_ms", or_null(a.ended_ms)},
                   {"resumed_from_step", or_null(a.resumed_from_step)},
                   {"mfu_flag", a.mfu_flag},
                   {"points", found == points.end() ? json::array() : std::move(found->second)}});
  }
  auto checkpoints = reader.series_checkpoints(id);
  if (!checkpoints) return checkpoints.error();
  return json{{"job_id", id},
              {"max_points", max_points},
              {"attempts", std::move(out)},
              {"checkpoints", checkpoints_json(*checkpoints, max_points)}};
}

}  // namespace orch
