// Store: jobs and the job state machine's guard.
#include <iostream>

#include "scheduler/spec/job_spec_json.h"
#include "scheduler/store/store.h"

namespace orch {
namespace {

constexpr const char* kJobColumns =
    "id, name, state, spec, infra_restarts, user_restarts, next_attempt_ms, reason, created_ms, "
    "updated_ms";

JobRow read_job(const Stmt& st) {
  JobRow j;
  j.id = st.col_int(0);
  j.name = st.col_text(1);
  j.state = parse_job_state(st.col_text(2)).value_or(JobState::failed);
  auto spec_json = nlohmann::json::parse(st.col_text(3), nullptr, false);
  if (auto spec = job_spec_from_json(spec_json)) j.spec = std::move(*spec);
  j.infra_restarts = static_cast<int>(st.col_int(4));
  j.user_restarts = static_cast<int>(st.col_int(5));
  j.next_attempt_ms = st.col_opt_int(6);
  j.reason = st.col_text(7);
  j.created_ms = st.col_int(8);
  j.updated_ms = st.col_int(9);
  return j;
}

}  // namespace

Result<JobId> Store::insert_job(const JobRow& row) {
  auto st = db_.prepare(
      "INSERT INTO jobs(name, state, spec, infra_restarts, user_restarts, next_attempt_ms, reason, "
      "created_ms, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!st) return st.error();
  if (auto r = st->bind_all(row.name, std::string(to_string(row.state)),
                            job_spec_to_json(row.spec).dump(), row.infra_restarts,
                            row.user_restarts, row.next_attempt_ms, row.reason, row.created_ms,
                            row.updated_ms)
                   .run();
      !r) {
    return r.error();
  }
  return db_.last_insert_id();
}

Result<std::optional<JobRow>> Store::job(JobId id) {
  auto st = db_.prepare(std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?");
  if (!st) return st.error();
  st->bind_all(id);
  return first_row(*st, read_job);
}

Result<std::vector<JobRow>> Store::jobs_in_states(const std::vector<JobState>& states) {
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE state IN (";
  for (std::size_t i = 0; i < states.size(); ++i) sql += i ? ", ?" : "?";
  sql += ") ORDER BY id";
  auto st = db_.prepare(sql);
  if (!st) return st.error();
  for (std::size_t i = 0; i < states.size(); ++i) {
    st->bind(static_cast<int>(i + 1), std::string(to_string(states[i])));
  }
  return collect_rows(*st, read_job);
}

Result<std::vector<JobRow>> Store::jobs(std::optional<JobState> state, int limit) {
  auto st = db_.prepare(std::string("SELECT ") + kJobColumns +
                        " FROM jobs WHERE (?1 IS NULL OR state = ?1) ORDER BY id DESC LIMIT ?2");
  if (!st) return st.error();
  std::optional<std::string> s;
  if (state) s = std::string(to_string(*state));
  st->bind(1, s).bind(2, limit);
  return collect_rows(*st, read_job);
}

Result<void> Store::update_job(const JobRow& row, Millis now) {
  auto current = job(row.id);
  if (!current) return current.error();
  if (!*current) return make_error(ErrorKind::not_found, "no job " + std::to_string(row.id));
  JobState from = (*current)->state;
  if (from != row.state && !can_transition(from, row.state)) {
    std::string msg = "refused illegal job transition " + std::string(to_string(from)) + " -> " +
                      std::string(to_string(row.state));
    std::cerr << "orchestrate: job " << row.id << ": " << msg << "\n";
    (void)add_event(row.id, std::nullopt, now, "illegal-transition", msg);
    return make_error(ErrorKind::conflict, "job " + std::to_string(row.id) + ": " + msg);
  }
  auto st = db_.prepare(
      "UPDATE jobs SET state = ?, infra_restarts = ?, user_restarts = ?, next_attempt_ms = ?, "
      "reason = ?, updated_ms = ? WHERE id = ?");
  if (!st) return st.error();
  return st->bind_all(std::string(to_string(row.state)), row.infra_restarts, row.user_restarts,
                      row.next_attempt_ms, row.reason, now, row.id)
      .run();
}

Result<void> Store::set_job_state(JobRow& row, JobState to, Millis now) {
  JobRow next = row;
  next.state = to;
  if (auto r = update_job(next, now); !r) return r;
  row.state = to;
  row.updated_ms = now;
  return Ok{};
}

}  // namespace orch
