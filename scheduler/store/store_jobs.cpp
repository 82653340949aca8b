// Store: jobs and the job state machine's guard.
#include <iostream>

#include "scheduler/spec/job_spec_json.h"
#include "scheduler/store/store.h"

namespace orch {
namespace {

constexpr const char* kJobColumns =
    "id, name, state, spec, infra_restarts, user_restarts, next_attempt_ms, reason, created_ms, "
    "updated_ms";

}  // namespace

JobRow Store::read_job(const Stmt& st) {
  JobRow j;
  j.id = st.col_int(0);
  j.name = st.col_text(1);
  j.state = parse_job_state(st.col_text(2)).value_or(JobState::failed);
  // Keyed by the stored text as well as the id: a rolled-back insert can hand its id to the
  // next job, and that job must never get the old spec.
  std::string text = st.col_text(3);
  if (auto hit = spec_cache_.find(j.id); hit != spec_cache_.end() && hit->second.first == text) {
    j.spec = hit->second.second;
  } else {
    auto spec_json = nlohmann::json::parse(text, nullptr, false);
    if (auto spec = job_spec_from_json(spec_json)) {
      j.spec = std::move(*spec);
      if (spec_cache_.size() >= 4096) spec_cache_.clear();
      spec_cache_[j.id] = {std::move(text), j.spec};
    }
  }
  j.infra_restarts = static_cast<int>(st.col_int(4));
  j.user_restarts = static_cast<int>(st.col_int(5));
  j.next_attempt_ms = st.col_opt_int(6);
  j.reason = st.col_text(7);
  j.created_ms = st.col_int(8);
  j.updated_ms = st.col_int(9);
  return j;
}

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
  return first_row(*st, [this](const Stmt& row) { return read_job(row); });
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
  return collect_rows(*st, [this](const Stmt& row) { return read_job(row); });
}

Result<std::vector<JobRow>> Store::jobs(std::optional<JobState> state, int limit) {
  auto st = db_.prepare(std::string("SELECT ") + kJobColumns +
                        " FROM jobs WHERE (?1 IS NULL OR state = ?1) ORDER BY id DESC LIMIT ?2");
  if (!st) return st.error();
  std::optional<std::string> s;
  if (state) s = std::string(to_string(*state));
  st->bind(1, s).bind(2, limit);
  return collect_rows(*st, [this](const Stmt& row) { return read_job(row); });
}

Result<void> Store::update_job(const JobRow& row, Millis now) {
  // Only the stored state matters here; reading the whole row would parse the spec again.
  auto st_state = db_.prepare("SELECT state FROM jobs WHERE id = ?");
  if (!st_state) return st_state.error();
  st_state->bind_all(row.id);
  auto current = first_row(*st_state, [](const Stmt& s) { return s.col_text(0); });
  if (!current) return current.error();
  if (!*current) return make_error(ErrorKind::not_found, "no job " + std::to_string(row.id));
  JobState from = parse_job_state(**current).value_or(JobState::failed);
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
