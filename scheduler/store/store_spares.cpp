// Store: the hot spares of each cluster (issue 38; rows.h's SpareRow) and their running totals.
#include <algorithm>

#include "scheduler/store/store.h"
#include "scheduler/store/store_shared.h"

namespace orch {

namespace {

constexpr const char* kSpareColumns =
    "id, cluster, node, token, state, gpus, created_ms, held_ms, ready_ms, ended_ms, reason, "
    "taken_by";

SpareRow read_spare(const Stmt& s) {
  SpareRow r;
  r.id = s.col_int(0);
  r.cluster = s.col_text(1);
  r.node = s.col_text(2);
  r.token = s.col_text(3);
  r.state = parse_spare_state(s.col_text(4)).value_or(SpareState::lost);
  r.gpus = static_cast<int>(s.col_int(5));
  r.created_ms = s.col_int(6);
  r.held_ms = s.col_opt_int(7);
  r.ready_ms = s.col_opt_int(8);
  r.ended_ms = s.col_opt_int(9);
  r.reason = s.col_text(10);
  r.taken_by = s.col_opt_int(11);
  return r;
}

// GPU-milliseconds a spare kept idle from its hold up to `until` (none before it was held).
std::int64_t idle_gpu_ms(const SpareRow& r, Millis until) {
  if (!r.held_ms) return 0;
  return static_cast<std::int64_t>(r.gpus) * std::max<Millis>(0, until - *r.held_ms);
}

}  // namespace

std::string_view to_string(SpareState s) {
  switch (s) {
    case SpareState::burning_in:
      return "burning_in";
    case SpareState::holding:
      return "holding";
    case SpareState::ready:
      return "ready";
    case SpareState::taken:
      return "taken";
    case SpareState::failed:
      return "failed";
    case SpareState::lost:
      return "lost";
    case SpareState::released:
      return "released";
  }
  return "lost";
}

std::optional<SpareState> parse_spare_state(std::string_view s) {
  for (SpareState v :
       {SpareState::burning_in, SpareState::holding, SpareState::ready, SpareState::taken,
        SpareState::failed, SpareState::lost, SpareState::released}) {
    if (to_string(v) == s) return v;
  }
  return std::nullopt;
}

Result<std::int64_t> Store::add_spare(const SpareRow& r) {
  attempts_moved();  // its GPUs are held from now: placement's view of the cluster moved
  auto ok =
      execute(db_,
              "INSERT INTO spares(cluster, node, token, state, gpus, created_ms, held_ms, "
              "ready_ms, ended_ms, reason, taken_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              r.cluster, r.node, r.token, std::string(to_string(r.state)), r.gpus, r.created_ms,
              r.held_ms, r.ready_ms, r.ended_ms, r.reason, r.taken_by);
  if (!ok) return ok.error();
  return db_.last_insert_id();
}

Result<void> Store::update_spare(const SpareRow& r) {
  auto before = query_one(db_, std::string("SELECT ") + kSpareColumns + " FROM spares WHERE id = ?",
                          read_spare, r.id);
  if (!before) return before.error();
  if (!*before) return make_error(ErrorKind::not_found, "no spare " + std::to_string(r.id));
  attempts_moved();
  if (is_live((*before)->state) && !is_live(r.state)) {
    // It ends: what it cost and how it ended go to the cluster's totals, once.
    const Millis end = r.ended_ms.value_or((*before)->created_ms);
    auto total = execute(
        db_,
        "INSERT INTO spare_totals(cluster, gpu_ms, taken, failed, lost) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(cluster) DO UPDATE SET gpu_ms = gpu_ms + excluded.gpu_ms, "
        "taken = taken + excluded.taken, failed = failed + excluded.failed, "
        "lost = lost + excluded.lost",
        r.cluster, idle_gpu_ms(r, end), r.state == SpareState::taken ? 1 : 0,
        r.state == SpareState::failed ? 1 : 0, r.state == SpareState::lost ? 1 : 0);
    if (!total) return total;
  }
  return execute(db_,
                 "UPDATE spares SET state = ?, held_ms = ?, ready_ms = ?, ended_ms = ?, "
                 "reason = ?, taken_by = ? WHERE id = ?",
                 std::string(to_string(r.state)), r.held_ms, r.ready_ms, r.ended_ms, r.reason,
                 r.taken_by, r.id);
}

Result<std::vector<SpareRow>> StoreReader::live_spares(const std::string& cluster) {
  static const std::string sql = std::string("SELECT ") + kSpareColumns +
                                 " FROM spares INDEXED BY spares_live WHERE cluster = ? AND "
                                 "state IN ('burning_in', 'holding', 'ready') ORDER BY id";
  return query(db_, sql, read_spare, cluster);
}

Result<std::optional<SpareRow>> StoreReader::spare_by_token(const std::string& token) {
  static const std::string sql =
      std::string("SELECT ") + kSpareColumns + " FROM spares WHERE token = ?";
  return query_one(db_, sql, read_spare, token);
}

Result<SpareTotals> StoreReader::spare_totals(const std::string& cluster, Millis now) {
  SpareTotals t;
  std::int64_t gpu_ms = 0;
  auto ended = query_one(
      db_, "SELECT gpu_ms, taken, failed, lost FROM spare_totals WHERE cluster = ?",
      [](const Stmt& s) {
        return std::pair<std::int64_t, SpareTotals>(
            s.col_int(0),
            SpareTotals{0, static_cast<int>(s.col_int(1)), static_cast<int>(s.col_int(2)),
                        static_cast<int>(s.col_int(3))});
      },
      cluster);
  if (!ended) return ended.error();
  if (*ended) {
    gpu_ms = (*ended)->first;
    t = (*ended)->second;
  }
  auto live = live_spares(cluster);
  if (!live) return live.error();
  for (const auto& r : *live) gpu_ms += idle_gpu_ms(r, now);
  t.gpu_hours = static_cast<double>(gpu_ms) / 3'600'000.0;
  return t;
}

}  // namespace orch
