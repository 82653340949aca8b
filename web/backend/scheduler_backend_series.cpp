// SchedulerBackend: a job's run as a series (GET /api/v1/jobs/{id}/series, issue 41). Each
// attempt's buckets (store_series.cpp) are merged at read time so that the answer holds at most
// max_points points over all attempts together, shared in proportion to each attempt's buckets;
// a point keeps the lowest and highest loss of its steps, so a single step's spike survives.
// The answer is JSON text (JsonText), written point by point.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <utility>

#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;

// The answer is written as text: a long series is thousands of points, and JSON values (a map
// per point) would cost more than reading them.
void add_number(std::string& out, const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) {
    out += "null";
    return;
  }
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, *v);
  if (ec != std::errc()) {
    out += "null";
    return;
  }
  const std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
  out += text;
  // Written as a number with a fraction, as nlohmann writes a double (2.0, not 2).
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

void add_int(std::string& out, std::int64_t v) {
  out += std::to_string(v);
}

void add_point(std::string& out, const SeriesPoint& p) {
  out += "{\"step\":";
  add_int(out, p.last_step);
  out += ",\"first_step\":";
  add_int(out, p.first_step);
  out += ",\"last_step\":";
  add_int(out, p.last_step);
  out += ",\"at_ms\":";
  add_int(out, p.at_ms);
  const std::pair<const char*, const std::optional<double>*> figures[] = {
      {",\"loss\":", &p.loss},
      {",\"loss_min\":", &p.loss_min},
      {",\"loss_max\":", &p.loss_max},
      {",\"tokens_per_s\":", &p.tokens_per_s},
      {",\"step_time_s\":", &p.step_time_s},
      {",\"mfu\":", &p.mfu}};
  for (const auto& [key, value] : figures) {
    out += key;
    add_number(out, *value);
  }
  out += '}';
}

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// An attempt's object, up to its points' array, which the caller writes and closes.
void open_attempt(std::string& out, const AttemptRow& a) {
  json head = {{"attempt", a.no},
               {"cluster", a.cluster},
               {"started_ms", a.started_ms},
               {"ended_ms", or_null(a.ended_ms)},
               {"resumed_from_step", or_null(a.resumed_from_step)},
               {"mfu_flag", a.mfu_flag}};
  std::string text = head.dump();
  text.pop_back();  // the closing brace
  out += text;
  out += ",\"points\":[";
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

Result<JsonText> SchedulerBackend::job_series(std::int64_t id, int max_points) {
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
  std::string out = "{\"job_id\":" + std::to_string(id) +
                    ",\"max_points\":" + std::to_string(max_points) + ",\"attempts\":[";
  for (std::size_t n = 0; n < attempts->size(); ++n) {
    const AttemptRow& a = (*attempts)[n];
    if (n > 0) out += ',';
    open_attempt(out, a);
    auto span = std::find_if(spans->begin(), spans->end(),
                             [&](const SeriesSpan& s) { return s.attempt_id == a.id; });
    const std::int64_t points = span == spans->end() ? 0 : share[span - spans->begin()];
    if (points > 0) {
      const std::int64_t group = (span->buckets() + points - 1) / points;
      auto read = reader.series_points(a.id, span->first_bucket, group);
      if (!read) return read.error();
      for (std::size_t i = 0; i < read->size(); ++i) {
        if (i > 0) out += ',';
        add_point(out, (*read)[i]);
      }
    }
    out += "]}";
  }
  auto checkpoints = reader.series_checkpoints(id);
  if (!checkpoints) return checkpoints.error();
  out += "],\"checkpoints\":" + checkpoints_json(*checkpoints, max_points).dump() + "}";
  return JsonText{std::move(out)};
}

}  // namespace orch
