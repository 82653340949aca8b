// Store: what issue 4's health work keeps — node ledger queries by kind, probe results, the
// sites' reachability log, the downsampled MFU history, and the facts the scorecard reads.
#include <string>

#include "scheduler/model/json_text.h"
#include "scheduler/store/store.h"
#include "scheduler/store/store_shared.h"

namespace orch {

namespace {

// Kinds go in as one JSON array: SQLite's json_each keeps the statement the same whatever their
// number.
std::string kinds_json(const std::vector<std::string>& kinds) {
  return json_text(nlohmann::json(kinds));
}

NodeEventRow read_node_event(const Stmt& s) {
  NodeEventRow e;
  e.id = s.col_int(0);
  e.cluster = s.col_text(1);
  e.node = s.col_text(2);
  e.at_ms = s.col_int(3);
  e.kind = s.col_text(4);
  e.message = s.col_text(5);
  e.job_id = s.col_opt_int(6);
  if (auto a = s.col_opt_int(7)) e.attempt_no = static_cast<int>(*a);
  e.incident = s.col_text(8);
  return e;
}

// Every column of node_events, in read_node_event's order.
constexpr const char* kNodeEventSelect =
    "SELECT id, cluster, node, at_ms, kind, message, job_id, attempt_no, incident "
    "FROM node_events ";

}  // namespace

Result<std::vector<NodeEventRow>> StoreReader::node_events(const std::string& cluster,
                                                           const std::optional<std::string>& node,
                                                           int limit) {
  return query(db_,
               std::string(kNodeEventSelect) +
                   "WHERE cluster = ?1 AND (?2 IS NULL OR node = ?2) "
                   "ORDER BY id DESC LIMIT ?3",
               read_node_event, cluster, node, limit);
}

Result<std::vector<NodeEventRow>> StoreReader::node_events_since(
    const std::string& cluster, const std::string& node, const std::vector<std::string>& kinds,
    Millis since_ms) {
  return query(db_,
               std::string(kNodeEventSelect) +
                   "WHERE cluster = ? AND node = ? AND at_ms >= ? "
                   "AND kind IN (SELECT value FROM json_each(?)) ORDER BY id",
               read_node_event, cluster, node, since_ms, kinds_json(kinds));
}

Result<std::vector<NodeEventRow>> StoreReader::node_events_of_kinds(
    const std::vector<std::string>& kinds, Millis since_ms) {
  return query(db_,
               std::string(kNodeEventSelect) +
                   "WHERE at_ms >= ? AND kind IN (SELECT value FROM json_each(?)) ORDER BY id",
               read_node_event, since_ms, kinds_json(kinds));
}

// ---- probes -----------------------------------------------------------------------------

Result<void> Store::add_probe(const ProbeRow& p) {
  return execute(db_,
                 "INSERT INTO probes(cluster, node, token, at_ms, passed, reason, gemm_gflops, "
                 "write_mb_s, read_mb_s, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 p.cluster, p.node, p.token, p.at_ms, p.passed ? 1 : 0, p.reason, p.gemm_gflops,
                 p.write_mb_s, p.read_mb_s, p.raw);
}

Result<std::vector<ProbeRow>> StoreReader::probes(const std::string& cluster,
                                                  const std::string& node, int limit) {
  auto read = [](const Stmt& s) {
    ProbeRow p;
    p.id = s.col_int(0);
    p.cluster = s.col_text(1);
    p.node = s.col_text(2);
    p.token = s.col_text(3);
    p.at_ms = s.col_int(4);
    p.passed = s.col_int(5) != 0;
    p.reason = s.col_text(6);
    p.gemm_gflops = s.col_opt_double(7);
    p.write_mb_s = s.col_opt_double(8);
    p.read_mb_s = s.col_opt_double(9);
    p.raw = s.col_text(10);
    return p;
  };
  return query(db_,
               "SELECT id, cluster, node, token, at_ms, passed, reason, gemm_gflops, write_mb_s, "
               "read_mb_s, raw FROM probes WHERE cluster = ?1 AND (?2 = '' OR node = ?2) "
               "ORDER BY id DESC LIMIT ?3",
               read, cluster, node, limit);
}

// ---- reachability -----------------------------------------------------------------------

Result<void> Store::add_health_log(const HealthLogRow& row) {
  return execute(db_, "INSERT INTO health_log(cluster, at_ms, health) VALUES (?, ?, ?)",
                 row.cluster, row.at_ms, std::string(to_string(row.health)));
}

Result<std::vector<HealthLogRow>> StoreReader::health_log(Millis since_ms) {
  return query(
      db_, "SELECT cluster, at_ms, health FROM health_log WHERE at_ms >= ? ORDER BY at_ms, id",
      [](const Stmt& s) {
        return HealthLogRow{s.col_text(0), s.col_int(1),
                            parse_site_health(s.col_text(2)).value_or(SiteHealth::healthy)};
      },
      since_ms);
}

// ---- MFU history ------------------------------------------------------------------------

Result<void> Store::add_mfu_samples(AttemptId attempt, const std::string& cluster,
                                    const std::string& nodes, Millis at_ms, double work,
                                    double time_s, int samples) {
  constexpr Millis kBucketMs = 60'000;
  // A bucket written before schema 30 (time_s 0, a sum of per-step MFUs) cannot be added to:
  // its minute starts over as work over time.
  return execute(
      db_,
      "INSERT INTO mfu_buckets(attempt_id, cluster, nodes, bucket_ms, mfu_sum, samples, "
      "time_s) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(attempt_id, bucket_ms) DO UPDATE "
      "SET mfu_sum = CASE WHEN time_s > 0 THEN mfu_sum ELSE 0 END + excluded.mfu_sum, "
      "samples = CASE WHEN time_s > 0 THEN samples ELSE 0 END + excluded.samples, "
      "time_s = time_s + excluded.time_s, nodes = excluded.nodes",
      attempt, cluster, nodes, at_ms - (at_ms % kBucketMs), work, samples, time_s);
}

Result<std::vector<MfuBucketRow>> StoreReader::mfu_series(AttemptId attempt,
                                                          const std::string& cluster,
                                                          Millis since_ms) {
  return query(
      db_,
      "SELECT attempt_id, cluster, nodes, bucket_ms, mfu_sum, samples, time_s FROM mfu_buckets "
      "WHERE (?1 != 0 AND attempt_id = ?1) OR (?1 = 0 AND cluster = ?2 AND "
      "bucket_ms >= ?3) ORDER BY bucket_ms, attempt_id",
      [](const Stmt& s) {
        return MfuBucketRow{s.col_int(0),   s.col_text(1),   s.col_text(2),
                            s.col_int(3),   s.col_double(4), static_cast<int>(s.col_int(5)),
                            s.col_double(6)};
      },
      attempt, cluster, since_ms);
}

// ---- scorecard facts --------------------------------------------------------------------

Result<std::vector<StoreReader::SaveTimeAt>> StoreReader::checkpoint_save_times_after(
    std::int64_t after_id, Millis since_ms) {
  return query(
      db_,
      "SELECT c.id, c.at_ms, a.cluster, c.save_time_s FROM checkpoints c "
      "JOIN attempts a ON a.id = c.attempt_id "
      "WHERE c.id > ? AND c.at_ms >= ? AND c.save_time_s IS NOT NULL ORDER BY c.id",
      [](const Stmt& st) {
        return SaveTimeAt{st.col_int(0), st.col_int(1), st.col_text(2), st.col_double(3)};
      },
      after_id, since_ms);
}

Result<std::vector<Store::AttemptSummary>> StoreReader::attempt_summaries_since(Millis since_ms) {
  return query(
      db_,
      "SELECT id, job_id, no, cluster, gpus, node_count, started_ms, "
      "running_ms, state, ended_ms, cause, mfu, last_alive_ms, due_ms, first_progress_ms, "
      "step_time_total"
      " FROM attempts WHERE id IN ("
      // One indexed lookup per condition: an OR of the three would scan the table,
      // and the planner, without statistics, prefers a scan to the partial index.
      "SELECT id FROM attempts INDEXED BY attempts_started WHERE started_ms >= ?1 "
      "UNION SELECT id FROM attempts INDEXED BY attempts_not_exited "
      "WHERE state != 'exited' "
      "UNION SELECT id FROM attempts INDEXED BY attempts_ended WHERE ended_ms >= ?1"
      ") ORDER BY id",
      [](const Stmt& st) {
        AttemptSummary a;
        a.id = st.col_int(0);
        a.job_id = st.col_int(1);
        a.no = static_cast<int>(st.col_int(2));
        a.cluster = st.col_text(3);
        a.gpus = static_cast<int>(st.col_int(4));
        a.nodes = static_cast<int>(st.col_opt_int(5).value_or(0));
        a.started_ms = st.col_int(6);
        a.running_ms = st.col_opt_int(7);
        a.state = parse_attempt_state(st.col_text(8)).value_or(AttemptState::exited);
        a.ended_ms = st.col_opt_int(9);
        a.cause = parse_exit_cause(st.col_text(10)).value_or(ExitCause::lost);
        a.mfu = st.col_opt_double(11);
        a.last_alive_ms = st.col_opt_int(12);
        a.due_ms = st.col_opt_int(13);
        a.first_progress_ms = st.col_opt_int(14);
        a.mfu_time_s = st.col_double(15);
        return a;
      },
      since_ms);
}

}  // namespace orch
