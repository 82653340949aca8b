// Store: attempts (with the attempt state machine's guard) and checkpoints (the series of their
// progress: store_series.cpp).
#include <algorithm>

#include "scheduler/model/hostlist.h"
#include "scheduler/model/json_text.h"
#include "scheduler/store/store.h"
#include "scheduler/store/store_shared.h"

namespace orch {
namespace {

constexpr const char* kAttemptColumns =
    "id, job_id, no, cluster, token, state, cause, exit_code, signal, site_job_id, nodes, gpus, "
    "cancel_requested, launch_done, resumed_from_step, resumed_from_path, started_ms, ended_ms, "
    "first_step, last_step, tokens_total, step_time_total, mfu, steps_lost, site_done, running_ms, "
    "last_progress_ms, mfu_watch, hang_after_ms, startup_timeout_ms, hang_watch, failed_node, "
    "last_alive_ms, preempt_for, preempt_asked_ms, checkpoint_dir, due_ms, first_progress_ms, "
    "mfu_flag, error_excerpt, not_launched";

// The same columns with an empty node list (StoreReader::live_attempts' with_nodes).
std::string attempt_columns(bool with_nodes) {
  std::string columns = kAttemptColumns;
  if (!with_nodes) columns.replace(columns.find(" nodes,"), 7, " '' AS nodes,");
  return columns;
}

std::optional<int> opt_int(const std::optional<std::int64_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

// {"adaptive":true,"steps_s":[0.21,0.2]}; anything unreadable reads as a fixed limit.
HangWatch hang_watch_from_text(const std::string& text) {
  HangWatch w;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return w;
  w.adaptive = j.value("adaptive", false);
  if (auto it = j.find("steps_s"); it != j.end() && it->is_array()) {
    for (const auto& v : *it) {
      if (v.is_number()) w.steps_s.push_back(v.get<double>());
    }
  }
  return w;
}

std::string hang_watch_text(const HangWatch& w) {
  if (!w.adaptive) return "{}";
  return json_text(nlohmann::json{{"adaptive", true}, {"steps_s", w.steps_s}});
}

// An attempt's nodes as the row keeps them: a host list ("gamma-[0001-0016,0018-2048]"), so
// that reading and writing a gang of thousands costs a few bytes; a JSON array of names when
// some name cannot be written in one, and in rows written before this form.
std::string node_list_text(const std::vector<std::string>& nodes) {
  // A running attempt's row is written again with every progress line, its gang unchanged:
  // the text of the last list written is kept (comparing the names costs less than writing
  // them again).
  thread_local std::vector<std::string> last_nodes;
  thread_local std::string last_text;
  if (!nodes.empty() && nodes == last_nodes) return last_text;
  std::string text;
  if (auto list = compress_hostlist(nodes)) {
    text = std::move(*list);
  } else {
    text = json_text(nlohmann::json(nodes));
  }
  last_nodes = nodes;
  last_text = text;
  return text;
}

std::vector<std::string> node_list_of(const std::string& text) {
  std::vector<std::string> nodes;
  if (text.rfind("[\"", 0) == 0 || text == "[]") {  // a list never starts so
    auto json = nlohmann::json::parse(text, nullptr, false);
    if (!json.is_array()) return nodes;
    for (const auto& n : json) {
      if (n.is_string()) nodes.push_back(n.get<std::string>());
    }
    return nodes;
  }
  auto expanded = expand_hostlist(text);
  return expanded ? std::move(*expanded) : nodes;
}

AttemptRow read_attempt(const Stmt& st) {
  AttemptRow a;
  a.id = st.col_int(0);
  a.job_id = st.col_int(1);
  a.no = static_cast<int>(st.col_int(2));
  a.cluster = st.col_text(3);
  a.token = st.col_text(4);
  a.state = parse_attempt_state(st.col_text(5)).value_or(AttemptState::exited);
  a.cause = parse_exit_cause(st.col_text(6)).value_or(ExitCause::lost);
  a.exit_code = opt_int(st.col_opt_int(7));
  a.signal = opt_int(st.col_opt_int(8));
  a.site_job_id = st.col_text(9);
  a.nodes = node_list_of(st.col_text(10));
  a.gpus = static_cast<int>(st.col_int(11));
  a.cancel_requested = st.col_int(12) != 0;
  a.launch_done = st.col_int(13) != 0;
  a.resumed_from_step = st.col_opt_int(14);
  a.resumed_from_path = st.col_text(15);
  a.started_ms = st.col_int(16);
  a.ended_ms = st.col_opt_int(17);
  a.first_step = st.col_opt_int(18);
  a.last_step = st.col_opt_int(19);
  a.tokens_total = st.col_double(20);
  a.step_time_total = st.col_double(21);
  a.mfu = st.col_opt_double(22);
  a.steps_lost = st.col_int(23);
  a.site_done = st.col_int(24) != 0;
  a.running_ms = st.col_opt_int(25);
  a.last_progress_ms = st.col_opt_int(26);
  a.mfu_watch = nlohmann::json::parse(st.col_text(27), nullptr, false);
  if (a.mfu_watch.is_discarded()) a.mfu_watch = nlohmann::json::object();
  a.hang_after_ms = st.col_int(28);
  a.startup_timeout_ms = st.col_int(29);
  a.hang_watch = hang_watch_from_text(st.col_text(30));
  a.failed_node = st.col_text(31);
  a.last_alive_ms = st.col_opt_int(32);
  a.preempt_for = st.col_opt_int(33);
  a.preempt_asked_ms = st.col_opt_int(34);
  a.checkpoint_dir = st.col_text(35);
  a.due_ms = st.col_opt_int(36);
  a.first_progress_ms = st.col_opt_int(37);
  a.mfu_flag = st.col_text(38);
  a.error_excerpt = st.col_text(39);
  a.not_launched = st.col_text(40);
  return a;
}

CheckpointRow read_checkpoint(const Stmt& st) {
  CheckpointRow c;
  c.id = st.col_int(0);
  c.job_id = st.col_int(1);
  c.attempt_id = st.col_int(2);
  c.step = st.col_int(3);
  c.path = st.col_text(4);
  c.save_time_s = st.col_opt_double(5);
  c.at_ms = st.col_int(6);
  c.cluster = st.col_text(7);
  if (!st.is_null(8)) {
    auto m = nlohmann::json::parse(st.col_text(8), nullptr, false);
    if (!m.is_discarded()) c.manifest = std::move(m);
  }
  c.bytes = st.col_opt_int(9);
  return c;
}

// The cluster comes from the attempt that saved the checkpoint.
constexpr const char* kCheckpointColumns =
    "c.id, c.job_id, c.attempt_id, c.step, c.path, c.save_time_s, c.at_ms, "
    "COALESCE((SELECT a.cluster FROM attempts a WHERE a.id = c.attempt_id), ''), c.manifest, "
    "c.bytes";

}  // namespace

Result<AttemptId> Store::add_attempt_row(const AttemptRow& a) {
  attempts_moved();
  if (auto r = execute(db_,
                       "INSERT INTO attempts(job_id, no, cluster, token, state, cause, nodes, "
                       "node_count, gpus, resumed_from_step, resumed_from_path, started_ms, "
                       "hang_after_ms, startup_timeout_ms, hang_watch, checkpoint_dir, due_ms) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       a.job_id, a.no, a.cluster, a.token, std::string(to_string(a.state)),
                       std::string(to_string(a.cause)), node_list_text(a.nodes),
                       static_cast<std::int64_t>(a.nodes.size()), a.gpus, a.resumed_from_step,
                       a.resumed_from_path, a.started_ms, a.hang_after_ms, a.startup_timeout_ms,
                       hang_watch_text(a.hang_watch), a.checkpoint_dir, a.due_ms);
      !r) {
    return r.error();
  }
  return db_.last_insert_id();
}

Result<AttemptId> Store::insert_attempt(const AttemptRow& a) {
  auto id = add_attempt_row(a);
  if (!id) return id;
  // The job's latest cluster, kept on the job so that listing jobs by cluster is an index scan.
  if (auto r = execute(db_, "UPDATE jobs SET cluster = ? WHERE id = ?", a.cluster, a.job_id); !r) {
    return r.error();
  }
  return id;
}

Result<AttemptId> Store::launch_attempt(JobRow& job, const AttemptRow& a, JobState to, Millis now) {
  if (a.job_id != job.id) {
    return make_error(ErrorKind::internal, "attempt of job " + std::to_string(a.job_id) +
                                               " launched for job " + std::to_string(job.id));
  }
  // The job first: a refused transition leaves no attempt behind, even outside a transaction.
  if (auto r = write_job(job, to, job.state, &a.cluster, now); !r) return r.error();
  job.state = to;
  job.updated_ms = now;
  return add_attempt_row(a);
}

Result<std::optional<AttemptRow>> StoreReader::attempt_by_token(const std::string& token) {
  return query_one(db_, std::string("SELECT ") + kAttemptColumns + " FROM attempts WHERE token = ?",
                   read_attempt, token);
}

Result<std::vector<AttemptRow>> StoreReader::attempts_of(JobId job) {
  // Made once: placing a job reads its attempts on every try.
  static const std::string sql =
      std::string("SELECT ") + kAttemptColumns + " FROM attempts WHERE job_id = ? ORDER BY no";
  return query(db_, sql, read_attempt, job);
}

Result<std::map<JobId, std::vector<AttemptRow>>> StoreReader::attempts_of_jobs(
    const std::vector<JobId>& jobs) {
  auto rows = query(db_,
                    std::string("SELECT ") + kAttemptColumns +
                        " FROM attempts WHERE job_id IN (SELECT value FROM json_each(?)) "
                        "ORDER BY job_id, no",
                    read_attempt, id_array(jobs));
  if (!rows) return rows.error();
  std::map<JobId, std::vector<AttemptRow>> out;
  for (auto& a : *rows) out[a.job_id].push_back(std::move(a));
  return out;
}

Result<std::vector<PreemptionCandidate>> StoreReader::preemption_candidates(
    std::optional<int> below_priority) {
  return query(
      db_,
      "SELECT a.id, a.job_id, a.cluster, a.gpus, COALESCE(json_extract(j.spec, '$.priority'), 0), "
      "COALESCE(a.last_step - MAX(COALESCE((SELECT MAX(c.step) FROM checkpoints c "
      "WHERE c.job_id = a.job_id), -1), COALESCE(a.resumed_from_step, -1), "
      "COALESCE(a.first_step, 0) - 1), 0), j.team, j.name "
      "FROM attempts a INDEXED BY attempts_not_exited JOIN jobs j ON j.id = a.job_id "
      "WHERE a.state != 'exited' AND a.cancel_requested = 0 AND a.preempt_for IS NULL "
      "AND COALESCE(json_extract(j.spec, '$.preemption.allowed'), 1) "
      "AND (?1 IS NULL OR COALESCE(json_extract(j.spec, '$.priority'), 0) < ?1) ORDER BY a.id",
      [](const Stmt& s) {
        PreemptionCandidate c;
        c.attempt = s.col_int(0);
        c.job = s.col_int(1);
        c.cluster = s.col_text(2);
        c.gpus = static_cast<int>(s.col_int(3));
        c.priority = static_cast<int>(s.col_int(4));
        c.steps_at_risk = std::max<std::int64_t>(s.col_int(5), 0);
        c.team = s.col_text(6);
        c.job_name = s.col_text(7);
        return c;
      },
      below_priority);
}

Result<std::vector<TeamUse>> StoreReader::team_uses() {
  // As gpus_in_use counts: unsettled attempts' processes may still hold their GPUs.
  return query(db_,
               "SELECT a.id, j.team, a.cluster, a.gpus FROM attempts a INDEXED BY "
               "attempts_unsettled JOIN jobs j ON j.id = a.job_id "
               "WHERE a.state != 'exited' OR a.site_done = 0 ORDER BY a.id",
               [](const Stmt& s) {
                 TeamUse u;
                 u.attempt = s.col_int(0);
                 u.team = s.col_text(1);
                 u.cluster = s.col_text(2);
                 u.gpus = static_cast<int>(s.col_int(3));
                 return u;
               });
}

// When a live attempt ends at the latest: its placement plus its job's time_limit (NULL without
// one). Both backfill's hold and the time limit's stop read it, so they agree to the millisecond.
constexpr const char* kEndsBy =
    "started_ms + CAST((SELECT json_extract(j.spec, '$.time_limit') FROM jobs j "
    "WHERE j.id = attempts.job_id) * 1000 AS INTEGER)";

Result<std::vector<AttemptEnd>> StoreReader::attempt_ends() {
  // As gpus_in_use counts: unsettled attempts' processes may still hold their GPUs.
  return query(db_,
               std::string("SELECT cluster, gpus, CASE WHEN state != 'exited' THEN ") + kEndsBy +
                   " END FROM attempts INDEXED BY attempts_unsettled "
                   "WHERE state != 'exited' OR site_done = 0 ORDER BY id",
               [](const Stmt& s) {
                 AttemptEnd e;
                 e.cluster = s.col_text(0);
                 e.gpus = static_cast<int>(s.col_int(1));
                 e.ends_ms = s.col_opt_int(2);
                 return e;
               });
}

Result<std::vector<AttemptRow>> StoreReader::attempts_past_time_limit(Millis now) {
  // Live attempts only (a NULL limit compares false).
  return query(db_,
               std::string("SELECT ") + kAttemptColumns +
                   " FROM attempts INDEXED BY attempts_not_exited WHERE state != 'exited' AND "
                   "cancel_requested = 0 AND " +
                   kEndsBy + " <= ? ORDER BY id",
               read_attempt, now);
}

Result<std::vector<AttemptRow>> StoreReader::queued_attempts() {
  return query(db_,
               std::string("SELECT ") + kAttemptColumns +
                   " FROM attempts INDEXED BY attempts_not_exited WHERE state != 'exited' AND "
                   "state = 'launching' "
                   "AND launch_done = 1 AND cancel_requested = 0 ORDER BY id",
               read_attempt);
}

Result<std::vector<AttemptRow>> StoreReader::preempting_attempts() {
  return query(db_,
               std::string("SELECT ") + kAttemptColumns +
                   " FROM attempts INDEXED BY attempts_preempting WHERE preempt_for IS NOT NULL "
                   "AND (state != 'exited' OR site_done = 0) ORDER BY id",
               read_attempt);
}

Result<std::vector<AttemptRow>> StoreReader::live_attempts(
    const std::optional<std::string>& cluster, bool with_nodes) {
  // Live attempts are few and ended ones many: both forms read the partial indexes of live
  // attempts only (the planner, without statistics, would otherwise scan the table).
  if (cluster) {
    return query(db_,
                 "SELECT " + attempt_columns(with_nodes) +
                     " FROM attempts INDEXED BY attempts_not_exited WHERE cluster = ? AND "
                     "state != 'exited' ORDER BY id",
                 read_attempt, *cluster);
  }
  return query(db_,
               "SELECT " + attempt_columns(with_nodes) +
                   " FROM attempts INDEXED BY attempts_not_exited WHERE state != 'exited' "
                   "ORDER BY id",
               read_attempt);
}

Result<std::vector<AttemptRow>> StoreReader::silent_attempts(Millis now) {
  return query(db_,
               std::string("SELECT ") + kAttemptColumns +
                   " FROM attempts WHERE state = 'running' AND cancel_requested = 0 AND ("
                   "(last_progress_ms IS NULL AND startup_timeout_ms > 0 AND "
                   "COALESCE(running_ms, started_ms) + startup_timeout_ms <= ?1) OR "
                   "(last_progress_ms IS NOT NULL AND hang_after_ms > 0 AND "
                   "last_progress_ms + hang_after_ms <= ?1)) "
                   "ORDER BY id",
               read_attempt, now);
}

Result<std::vector<AttemptRow>> StoreReader::watched_attempts(const std::string& cluster,
                                                              bool with_nodes) {
  return query(db_,
               "SELECT " + attempt_columns(with_nodes) +
                   // One partial index per condition: an OR would read every attempt the
                   // cluster ever ran, on every poll.
                   " FROM attempts WHERE id IN (SELECT id FROM attempts INDEXED BY "
                   "attempts_not_exited WHERE cluster = ?1 AND state != 'exited' UNION SELECT id "
                   "FROM attempts INDEXED BY attempts_site_open WHERE cluster = ?1 AND "
                   "site_done = 0) ORDER BY id",
               read_attempt, cluster);
}

Result<std::map<std::string, GpusInUse>> StoreReader::gpus_in_use() {
  // Unsettled attempts count too: their processes may still hold the GPUs.
  auto rows = query(db_,
                    "SELECT cluster, SUM(gpus), SUM(CASE WHEN state = 'launching' THEN 0 ELSE gpus "
                    "END) FROM attempts WHERE state != 'exited' OR site_done = 0 GROUP BY cluster",
                    [](const Stmt& s) {
                      return std::pair<std::string, GpusInUse>(
                          s.col_text(0), GpusInUse{static_cast<int>(s.col_int(1)),
                                                   static_cast<int>(s.col_int(2))});
                    });
  if (!rows) return rows.error();
  return std::map<std::string, GpusInUse>(rows->begin(), rows->end());
}

Result<void> Store::update_attempt(const AttemptRow& a) {
  auto current = query_one(
      db_, "SELECT state, site_done FROM attempts WHERE token = ?",
      [](const Stmt& s) { return std::pair<std::string, bool>(s.col_text(0), s.col_int(1) != 0); },
      a.token);
  if (!current) return current.error();
  if (!*current) return make_error(ErrorKind::not_found, "no attempt with token " + a.token);
  AttemptState from = parse_attempt_state((*current)->first).value_or(AttemptState::exited);
  // Whether the attempt holds its GPUs (Store::gpus_in_use) depends on these two alone.
  if (from != a.state || (*current)->second != a.site_done) attempts_moved();
  if (from != a.state && !can_transition(from, a.state)) {
    return refuse_transition("attempt", a.token, a.job_id, a.no, a.ended_ms.value_or(a.started_ms),
                             to_string(from), to_string(a.state));
  }
  if (!(*current)->second && a.site_done) {
    if (auto r = note_gone_from_nodes(a); !r) return r;
  }
  if (from != AttemptState::exited && a.state == AttemptState::exited && a.ended_ms) {
    if (auto r = add_work_exposure(a, *a.ended_ms, 1.0); !r) return r;
  }
  if (attempt_pricer_ && (from == AttemptState::exited || a.state == AttemptState::exited)) {
    std::optional<AttemptRow> before;
    if (from == AttemptState::exited) {
      auto stored = attempt_by_token(a.token);
      if (!stored) return stored.error();
      before = *stored;
    }
    if (auto r = tally_attempt_cost(before, a); !r) return r;
  }
  return write_attempt(a);
}

Result<void> Store::add_work_exposure(const AttemptRow& a, Millis ended_ms, double sign) {
  if (!a.running_ms || a.nodes.empty() || ended_ms <= *a.running_ms) return Ok{};
  const double gpu_hours = static_cast<double>(a.gpus) / static_cast<double>(a.nodes.size()) *
                           static_cast<double>(ended_ms - *a.running_ms) / 3'600'000.0;
  for (const auto& node : a.nodes) {
    if (auto r = execute(db_,
                         "UPDATE nodes SET work_gpu_h = MAX(0, work_gpu_h + ?) WHERE cluster = ? "
                         "AND name = ?",
                         sign * gpu_hours, a.cluster, node);
        !r) {
      return r;
    }
  }
  return Ok{};
}

Result<void> Store::note_gone_from_nodes(const AttemptRow& a) {
  // Its site says it ended: the site's last listing of its nodes, made before, still counts its
  // GPUs busy. Until the next listing they are ours, not another tenant's (site_capacity.h).
  if (!a.running_ms || a.nodes.empty()) return Ok{};
  const int per_node = a.gpus / static_cast<int>(a.nodes.size());
  for (const auto& node : a.nodes) {
    if (auto r = execute(db_,
                         "UPDATE nodes SET gpus_ours_gone = MIN(MAX(gpus, gpus_busy), "
                         "gpus_ours_gone + ?) WHERE cluster = ? AND name = ?",
                         per_node, a.cluster, node);
        !r) {
      return r;
    }
  }
  return Ok{};
}

Result<void> Store::write_attempt(const AttemptRow& a) {
  return execute(
      db_,
      "UPDATE attempts SET state = ?, cause = ?, exit_code = ?, signal = ?, "
      "site_job_id = ?, nodes = ?, node_count = ?, cancel_requested = ?, launch_done = ?, ended_ms "
      "= ?, "
      "first_step = ?, last_step = ?, tokens_total = ?, step_time_total = ?, mfu = ?, "
      "steps_lost = ?, site_done = ?, running_ms = ?, last_progress_ms = ?, "
      "mfu_watch = ?, resumed_from_step = ?, resumed_from_path = ?, hang_after_ms = ?, "
      "hang_watch = ?, failed_node = ?, last_alive_ms = ?, preempt_for = ?, "
      "preempt_asked_ms = ?, first_progress_ms = ?, mfu_flag = ?, error_excerpt = ?, "
      "not_launched = ? WHERE id = ?",
      std::string(to_string(a.state)), std::string(to_string(a.cause)), a.exit_code, a.signal,
      a.site_job_id, node_list_text(a.nodes), static_cast<std::int64_t>(a.nodes.size()),
      a.cancel_requested ? 1 : 0, a.launch_done ? 1 : 0, a.ended_ms, a.first_step, a.last_step,
      a.tokens_total, a.step_time_total, a.mfu, a.steps_lost, a.site_done ? 1 : 0, a.running_ms,
      a.last_progress_ms, a.mfu_watch.is_null() ? std::string("{}") : json_text(a.mfu_watch),
      a.resumed_from_step, a.resumed_from_path, a.hang_after_ms, hang_watch_text(a.hang_watch),
      a.failed_node, a.last_alive_ms, a.preempt_for, a.preempt_asked_ms, a.first_progress_ms,
      a.mfu_flag, a.error_excerpt, a.not_launched, a.id);
}

Result<void> Store::set_attempt_state(AttemptRow& row, AttemptState to, Millis now) {
  AttemptRow next = row;
  next.state = to;
  if (to == AttemptState::exited) next.ended_ms = now;
  if (auto r = update_attempt(next); !r) return r;
  row = next;
  return Ok{};
}

Result<void> Store::reinstate_attempt(AttemptRow& row, AttemptState to) {
  attempts_moved();
  auto current = query_one(
      db_, "SELECT state, cause FROM attempts WHERE token = ?",
      [](const Stmt& s) {
        return std::pair<std::string, std::string>(s.col_text(0), s.col_text(1));
      },
      row.token);
  if (!current) return current.error();
  if (!*current) return make_error(ErrorKind::not_found, "no attempt with token " + row.token);
  AttemptState from = parse_attempt_state((*current)->first).value_or(AttemptState::exited);
  ExitCause cause = parse_exit_cause((*current)->second).value_or(ExitCause::lost);
  if (!can_reinstate(from, cause, to)) {
    return refuse_transition(
        "attempt", row.token, row.job_id, row.no, row.ended_ms.value_or(row.started_ms),
        std::string(to_string(from)) + "(" + std::string(to_string(cause)) + ")", to_string(to));
  }
  if (from == AttemptState::exited && row.ended_ms) {
    if (auto r = add_work_exposure(row, *row.ended_ms, -1.0); !r) return r;
  }
  if (attempt_pricer_ && from == AttemptState::exited) {
    auto stored = attempt_by_token(row.token);
    if (!stored) return stored.error();
    if (auto r = tally_attempt_cost(*stored, std::nullopt); !r) return r;
  }
  AttemptRow next = row;
  next.state = to;
  next.cause = ExitCause::none;
  next.exit_code.reset();
  next.signal.reset();
  next.ended_ms.reset();
  next.site_done = false;
  next.launch_done = true;
  if (auto r = write_attempt(next); !r) return r;
  row = next;
  return Ok{};
}

Result<std::optional<CheckpointRow>> StoreReader::checkpoint(std::int64_t id) {
  return query_one(
      db_, std::string("SELECT ") + kCheckpointColumns + " FROM checkpoints c WHERE c.id = ?",
      read_checkpoint, id);
}

Result<void> Store::set_checkpoint_manifest(std::int64_t id, const nlohmann::json& manifest,
                                            std::int64_t bytes) {
  return execute(db_, "UPDATE checkpoints SET manifest = ?, bytes = ? WHERE id = ?",
                 json_text(manifest), bytes, id);
}

Result<std::optional<std::int64_t>> Store::insert_checkpoint(const CheckpointRow& c) {
  if (auto r = execute(
          db_,
          "INSERT OR IGNORE INTO checkpoints(job_id, attempt_id, step, path, save_time_s, at_ms) "
          "VALUES (?, ?, ?, ?, ?, ?)",
          c.job_id, c.attempt_id, c.step, c.path, c.save_time_s, c.at_ms);
      !r) {
    return r.error();
  }
  if (db_.changes() == 0) return std::optional<std::int64_t>{};
  return std::optional<std::int64_t>{db_.last_insert_id()};
}

Result<std::optional<CheckpointRow>> StoreReader::latest_checkpoint(JobId job) {
  return query_one(
      db_,
      std::string("SELECT ") + kCheckpointColumns +
          " FROM checkpoints c WHERE c.job_id = ? ORDER BY c.step DESC, c.id DESC LIMIT 1",
      read_checkpoint, job);
}

Result<std::map<JobId, CheckpointRow>> StoreReader::latest_checkpoints(
    const std::vector<JobId>& jobs) {
  auto rows = query(db_,
                    std::string("SELECT ") + kCheckpointColumns +
                        " FROM checkpoints c WHERE c.id IN (SELECT (SELECT l.id FROM checkpoints l "
                        "WHERE l.job_id = j.value ORDER BY l.step DESC, l.id DESC LIMIT 1) "
                        "FROM json_each(?) j)",
                    read_checkpoint, id_array(jobs));
  if (!rows) return rows.error();
  std::map<JobId, CheckpointRow> out;
  for (auto& c : *rows) out.emplace(c.job_id, std::move(c));
  return out;
}

Result<std::vector<Store::SaveTime>> StoreReader::checkpoint_save_times_since(Millis since_ms) {
  return query(
      db_,
      "SELECT a.cluster, c.save_time_s FROM checkpoints c INDEXED BY checkpoints_at "
      "JOIN attempts a ON a.id = c.attempt_id "
      "WHERE c.at_ms >= ? AND c.save_time_s IS NOT NULL ORDER BY c.id",
      [](const Stmt& st) {
        return SaveTime{st.col_text(0), st.col_double(1)};
      },
      since_ms);
}

Result<std::vector<CheckpointRow>> StoreReader::checkpoints_with_copies(JobId job) {
  static const std::string sql = std::string("SELECT ") + kCheckpointColumns +
                                 " FROM checkpoints c WHERE c.id IN (" + kCheckpointsWithCopies +
                                 ") ORDER BY c.step, c.id";
  return query(db_, sql, read_checkpoint, job);
}

Result<bool> StoreReader::has_checkpoints(JobId job) {
  auto st = db_.prepare("SELECT EXISTS (SELECT 1 FROM checkpoints WHERE job_id = ?)");
  if (!st) return st.error();
  st->bind(1, job);
  auto row = st->step();
  if (!row) return row.error();
  return st->col_int(0) != 0;
}

Result<std::vector<CheckpointRow>> StoreReader::checkpoints_of_attempt_at(JobId job,
                                                                          std::int64_t attempt_id,
                                                                          std::int64_t step) {
  static const std::string sql = std::string("SELECT ") + kCheckpointColumns +
                                 " FROM checkpoints c WHERE c.job_id = ? AND c.step = ? AND "
                                 "c.attempt_id = ? ORDER BY c.id DESC";
  return query(db_, sql, read_checkpoint, job, step, attempt_id);
}

Result<std::vector<CheckpointRow>> StoreReader::checkpoints_of(JobId job) {
  static const std::string sql = std::string("SELECT ") + kCheckpointColumns +
                                 " FROM checkpoints c WHERE c.job_id = ? ORDER BY c.step, c.id";
  return query(db_, sql, read_checkpoint, job);
}

}  // namespace orch
