// Store: the run as a series (issue 41). Each progress line's step is added to its attempt's
// bucket step / width (series_buckets, migration 30): first and last step and time, how many
// steps, loss (how many reported one, their sum, lowest, highest, last), tokens and the step time
// they took, step time (sum and highest) and MFU as work over time (sum of MFU x step time, and
// the step time it covers). An attempt keeps at most kSeriesBucketCap buckets: past it the width
// doubles and the buckets merge in SQL, so a step costs O(1) amortised and a read costs the
// buckets it reads, never the steps.
#include <algorithm>
#include <cmath>

#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"

namespace orch {
namespace {

// Beyond any real run's figures, and far enough from overflow that sums over every step of an
// attempt stay finite (an infinite or NaN value would break the sums and their NOT NULLs).
constexpr double kMaxMagnitude = 1e100;
constexpr std::int64_t kMaxWidth = std::int64_t{1} << 62;

std::optional<double> finite(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v) || std::fabs(*v) > kMaxMagnitude) return std::nullopt;
  return v;
}

constexpr const char* kUpsert =
    "INSERT INTO series_buckets(attempt_id, bucket, first_step, last_step, first_ms, last_ms, "
    "steps, loss_n, loss_sum, loss_min, loss_max, loss_last, timed_steps, tokens, tokens_time_s, "
    "step_time_s, step_time_max, mfu_work, mfu_time_s) "
    "VALUES (?1, ?2, ?3, ?3, ?4, ?4, 1, ?5, ?6, ?7, ?7, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
    "ON CONFLICT(attempt_id, bucket) DO UPDATE SET "
    "first_step = MIN(first_step, excluded.first_step), "
    "last_step = MAX(last_step, excluded.last_step), "
    "first_ms = MIN(first_ms, excluded.first_ms), last_ms = MAX(last_ms, excluded.last_ms), "
    "steps = steps + 1, loss_n = loss_n + excluded.loss_n, "
    "loss_sum = loss_sum + excluded.loss_sum, "
    "loss_min = MIN(COALESCE(loss_min, excluded.loss_min), COALESCE(excluded.loss_min, loss_min)), "
    "loss_max = MAX(COALESCE(loss_max, excluded.loss_max), COALESCE(excluded.loss_max, loss_max)), "
    "loss_last = COALESCE(excluded.loss_last, loss_last), "
    "timed_steps = timed_steps + excluded.timed_steps, tokens = tokens + excluded.tokens, "
    "tokens_time_s = tokens_time_s + excluded.tokens_time_s, "
    "step_time_s = step_time_s + excluded.step_time_s, "
    "step_time_max = MAX(COALESCE(step_time_max, excluded.step_time_max), "
    "COALESCE(excluded.step_time_max, step_time_max)), "
    "mfu_work = mfu_work + excluded.mfu_work, mfu_time_s = mfu_time_s + excluded.mfu_time_s";

// The merge: every `factor` consecutive buckets (?2) of attempt ?1 become one, written first
// under negative numbers (-1 - new bucket) so that they never meet the rows they come from.
constexpr const char* kMergeInto =
    "INSERT INTO series_buckets(attempt_id, bucket, first_step, last_step, first_ms, last_ms, "
    "steps, loss_n, loss_sum, loss_min, loss_max, loss_last, timed_steps, tokens, tokens_time_s, "
    "step_time_s, step_time_max, mfu_work, mfu_time_s) "
    "SELECT ?1, -1 - s.bucket / ?2, MIN(first_step), MAX(last_step), MIN(first_ms), "
    "MAX(last_ms), SUM(steps), SUM(loss_n), SUM(loss_sum), MIN(loss_min), MAX(loss_max), "
    "(SELECT l.loss_last FROM series_buckets l WHERE l.attempt_id = ?1 "
    "AND l.bucket >= (s.bucket / ?2) * ?2 AND l.bucket < (s.bucket / ?2 + 1) * ?2 "
    "AND l.loss_last IS NOT NULL ORDER BY l.bucket DESC LIMIT 1), "
    "SUM(timed_steps), SUM(tokens), SUM(tokens_time_s), SUM(step_time_s), MAX(step_time_max), "
    "SUM(mfu_work), SUM(mfu_time_s) "
    "FROM series_buckets s WHERE s.attempt_id = ?1 AND s.bucket >= 0 GROUP BY s.bucket / ?2";

Result<std::int64_t> width_of(Db& db, AttemptId attempt) {
  auto w = query_one(
      db, "SELECT series_width FROM attempts WHERE id = ?",
      [](const Stmt& st) { return st.col_int(0); }, attempt);
  if (!w) return w.error();
  if (!*w) return make_error(ErrorKind::not_found, "no attempt " + std::to_string(attempt));
  return std::max<std::int64_t>(1, **w);
}

// Merges the attempt's buckets `factor` into one and records its new width.
Result<void> merge_buckets(Db& db, AttemptId attempt, std::int64_t factor, std::int64_t width) {
  if (auto r = execute(db, kMergeInto, attempt, factor); !r) return r;
  if (auto r =
          execute(db, "DELETE FROM series_buckets WHERE attempt_id = ? AND bucket >= 0", attempt);
      !r) {
    return r;
  }
  if (auto r = execute(
          db, "UPDATE series_buckets SET bucket = -1 - bucket WHERE attempt_id = ? AND bucket < 0",
          attempt);
      !r) {
    return r;
  }
  return execute(db, "UPDATE attempts SET series_width = ? WHERE id = ?", width, attempt);
}

// A bucket's sums as series_points reads them, and merged into the point they fall in.
struct Sums {
  std::int64_t first_step = 0, last_step = 0, last_ms = 0, steps = 0;
  std::int64_t loss_n = 0, timed = 0;
  double loss_sum = 0, tokens = 0, tokens_time = 0, step_time = 0, mfu_work = 0, mfu_time = 0;
  std::optional<double> loss_min, loss_max;
};

Sums read_sums(const Stmt& st) {
  Sums b;
  b.first_step = st.col_int(1);
  b.last_step = st.col_int(2);
  b.last_ms = st.col_int(3);
  b.steps = st.col_int(4);
  b.loss_n = st.col_int(5);
  b.loss_sum = st.col_double(6);
  b.loss_min = st.col_opt_double(7);
  b.loss_max = st.col_opt_double(8);
  b.tokens = st.col_double(9);
  b.tokens_time = st.col_double(10);
  b.timed = st.col_int(11);
  b.step_time = st.col_double(12);
  b.mfu_work = st.col_double(13);
  b.mfu_time = st.col_double(14);
  return b;
}

std::optional<double> lower(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b) return a ? a : b;
  return std::min(*a, *b);
}
std::optional<double> higher(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b) return a ? a : b;
  return std::max(*a, *b);
}

// b (a later bucket) into p.
void merge_into(Sums& p, const Sums& b) {
  p.last_step = b.last_step;
  p.last_ms = std::max(p.last_ms, b.last_ms);
  p.steps += b.steps;
  p.loss_n += b.loss_n;
  p.loss_sum += b.loss_sum;
  p.loss_min = lower(p.loss_min, b.loss_min);
  p.loss_max = higher(p.loss_max, b.loss_max);
  p.tokens += b.tokens;
  p.tokens_time += b.tokens_time;
  p.timed += b.timed;
  p.step_time += b.step_time;
  p.mfu_work += b.mfu_work;
  p.mfu_time += b.mfu_time;
}

SeriesPoint point_of(const Sums& b) {
  SeriesPoint p;
  p.first_step = b.first_step;
  p.last_step = b.last_step;
  p.at_ms = b.last_ms;
  p.steps = b.steps;
  if (b.loss_n > 0) {
    p.loss = b.loss_sum / static_cast<double>(b.loss_n);
    p.loss_min = b.loss_min;
    p.loss_max = b.loss_max;
  }
  if (b.tokens_time > 0) p.tokens_per_s = b.tokens / b.tokens_time;
  if (b.timed > 0) p.step_time_s = b.step_time / static_cast<double>(b.timed);
  if (b.mfu_time > 0) p.mfu = b.mfu_work / b.mfu_time;
  return p;
}

}  // namespace

Result<void> Store::add_series_step(AttemptId attempt, std::int64_t first_step,
                                    const SeriesStep& s) {
  auto width = width_of(db_, attempt);
  if (!width) return width.error();
  std::int64_t w = *width;
  const std::int64_t first = std::min(first_step, s.step);
  while (s.step / w - first / w + 1 > kSeriesBucketCap && w < kMaxWidth) w *= 2;
  if (w != *width) {
    if (auto r = merge_buckets(db_, attempt, w / *width, w); !r) return r;
  }
  const auto loss = finite(s.loss);
  auto step_time = finite(s.step_time_s);
  if (step_time && *step_time <= 0) step_time.reset();
  const auto mfu = step_time ? finite(s.mfu) : std::nullopt;
  const bool with_tokens = s.tokens && step_time;
  const double tokens = with_tokens ? static_cast<double>(*s.tokens) : 0.0;
  return execute(db_, kUpsert, attempt, s.step / w, s.step, s.at_ms, loss ? 1 : 0,
                 loss.value_or(0.0), loss, step_time ? 1 : 0, tokens,
                 with_tokens ? *step_time : 0.0, step_time.value_or(0.0), step_time,
                 mfu ? *mfu * *step_time : 0.0, mfu ? *step_time : 0.0);
}

Result<std::vector<SeriesSpan>> StoreReader::series_spans(JobId job) {
  auto rows = query(
      db_,
      "SELECT a.id, a.series_width, "
      "(SELECT MIN(bucket) FROM series_buckets WHERE attempt_id = a.id), "
      "(SELECT MAX(bucket) FROM series_buckets WHERE attempt_id = a.id) "
      "FROM attempts a WHERE a.job_id = ? ORDER BY a.no",
      [](const Stmt& st) {
        SeriesSpan s;
        s.attempt_id = st.col_int(0);
        s.width = std::max<std::int64_t>(1, st.col_int(1));
        s.first_bucket = st.col_opt_int(2).value_or(-1);
        s.last_bucket = st.col_opt_int(3).value_or(-1);
        return s;
      },
      job);
  if (!rows) return rows.error();
  std::vector<SeriesSpan> out;
  for (const SeriesSpan& s : *rows) {
    if (s.first_bucket >= 0) out.push_back(s);
  }
  return out;
}

Result<std::vector<SeriesPoint>> StoreReader::series_points(AttemptId attempt,
                                                            std::int64_t first_bucket,
                                                            std::int64_t group) {
  // The buckets in key order (a range of the primary key, no sort), merged here: a point holds
  // the buckets whose (bucket - first_bucket) / group is the same.
  auto st = db_.prepare(
      "SELECT bucket, first_step, last_step, last_ms, steps, loss_n, loss_sum, loss_min, loss_max, "
      "tokens, tokens_time_s, timed_steps, step_time_s, mfu_work, mfu_time_s "
      "FROM series_buckets WHERE attempt_id = ? AND bucket >= ? ORDER BY bucket");
  if (!st) return st.error();
  st->bind_all(attempt, first_bucket);
  group = std::max<std::int64_t>(1, group);
  std::vector<SeriesPoint> out;
  std::optional<Sums> point;
  std::int64_t point_key = -1;
  for (;;) {
    auto row = st->step();
    if (!row) return row.error();
    if (!*row) break;
    const std::int64_t key = (st->col_int(0) - first_bucket) / group;
    const Sums b = read_sums(*st);
    if (point && key == point_key) {
      merge_into(*point, b);
      continue;
    }
    if (point) out.push_back(point_of(*point));
    point = b;
    point_key = key;
  }
  if (point) out.push_back(point_of(*point));
  return out;
}

Result<std::vector<SeriesCheckpoint>> StoreReader::series_checkpoints(JobId job) {
  return query(
      db_,
      "SELECT c.step, a.no, MIN(c.at_ms) FROM checkpoints c JOIN attempts a ON a.id = c.attempt_id "
      "WHERE c.job_id = ? GROUP BY c.step, a.no ORDER BY c.step, a.no",
      [](const Stmt& st) {
        return SeriesCheckpoint{st.col_int(0), static_cast<int>(st.col_int(1)), st.col_int(2)};
      },
      job);
}

}  // namespace orch
