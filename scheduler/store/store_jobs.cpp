// Store: jobs and the job state machine's guard.
#include "scheduler/model/json_text.h"
#include "scheduler/spec/job_spec_json.h"
#include "scheduler/store/store.h"
#include "scheduler/store/store_shared.h"

namespace orch {
namespace {

// A job row's revision (schema v8), as a column of a statement over jobs.
const std::string kRevision = "(SELECT r.revision FROM job_revisions r WHERE r.job_id = jobs.id)";
// The columns of a listing: the spec's resources by SQLite's own JSON reader, no parse here.
const std::string kListingColumns =
    "id, name, state, json_extract(spec, '$.resources.nodes'), "
    "json_extract(spec, '$.resources.gpus_per_node'), infra_restarts, user_restarts, "
    "next_attempt_ms, reason, created_ms, updated_ms, " +
    kRevision +
    ", owner, team, grp, json_extract(spec, '$.priority'), json_extract(spec, "
    "'$.priority_class'), json_extract(spec, '$.sweep_point')";
// A listing and the spec's text (column 18), for a listing that also shows the spec.
constexpr int kSpecColumn = 18;
const std::string kListingAndSpecColumns = kListingColumns + ", spec";
// A whole job, as read_job reads it: the spec's resources come from the parsed spec, so SQLite
// need not read the spec's JSON for them too (columns 3, 4 and 15 to 17 are NULL).
const std::string kJobColumns =
    "id, name, state, NULL, NULL, infra_restarts, user_restarts, next_attempt_ms, reason, "
    "created_ms, updated_ms, " +
    kRevision + ", owner, team, grp, NULL, NULL, NULL, spec";
// A job's id and revision, the key of its cached renderings.
const std::string kKeyColumns = "id, " + kRevision;

// A number under the spec's "resources" (as json_extract reads it for a listing), else 0.
int resource_of(const nlohmann::json& spec, const char* key) {
  if (!spec.is_object()) return 0;
  auto res = spec.find("resources");
  if (res == spec.end() || !res->is_object()) return 0;
  auto v = res->find(key);
  return v != res->end() && v->is_number_integer() ? v->get<int>() : 0;
}

JobKey read_job_key(const Stmt& s) {
  return JobKey{s.col_int(0), s.col_int(1)};
}

}  // namespace

JobRow StoreReader::read_job_listing(const Stmt& st) {
  JobRow j;
  j.id = st.col_int(0);
  j.name = st.col_text(1);
  j.state = parse_job_state(st.col_text(2)).value_or(JobState::failed);
  j.spec.name = j.name;
  j.spec.nodes = static_cast<int>(st.col_int(3));
  j.spec.gpus_per_node = static_cast<int>(st.col_int(4));
  j.infra_restarts = static_cast<int>(st.col_int(5));
  j.user_restarts = static_cast<int>(st.col_int(6));
  j.next_attempt_ms = st.col_opt_int(7);
  j.reason = st.col_text(8);
  j.created_ms = st.col_int(9);
  j.updated_ms = st.col_int(10);
  j.revision = st.col_int(11);
  j.spec.owner = st.col_text(12);
  j.spec.team = st.col_text(13);
  j.spec.group = st.col_text(14);
  j.spec.priority = static_cast<int>(st.col_int(15));
  j.spec.priority_class = st.col_text(16);
  j.spec.sweep_point = st.col_text(17);
  return j;
}

Result<std::optional<JobRow>> StoreReader::job_listing(JobId id, nlohmann::json* spec) {
  std::optional<std::string> text;
  auto row = query_one(
      db_, "SELECT " + kListingAndSpecColumns + " FROM jobs WHERE id = ?",
      [&](const Stmt& st) {
        if (spec) text = st.col_text(kSpecColumn);
        return read_job_listing(st);
      },
      id);
  if (row && *row && spec) *spec = nlohmann::json::parse(text.value_or("{}"), nullptr, false);
  return row;
}

JobRow StoreReader::read_job(const Stmt& st) {
  JobRow j = read_job_listing(st);
  // Keyed by the stored text as well as the id: a rolled-back insert can hand its id to the
  // next job, and that job must never get the old spec.
  std::string text = st.col_text(kSpecColumn);
  if (auto hit = spec_cache_.find(j.id); hit != spec_cache_.end() && hit->second.first == text) {
    j.spec = hit->second.second;
  } else {
    auto spec_json = nlohmann::json::parse(text, nullptr, false);
    if (auto spec = job_spec_from_json(spec_json)) {
      j.spec = std::move(*spec);
      // Room for a long queue: the brain reads a waiting job's spec on every try, and a spec
      // read back costs a run of the YAML parser (REST reads avoid it: job_listing).
      if (spec_cache_.size() >= 16384) spec_cache_.clear();
      spec_cache_[j.id] = {std::move(text), j.spec};
    } else {
      // Unreadable as a spec: its size as a job listing shows it, the rest as read.
      j.spec.nodes = resource_of(spec_json, "nodes");
      j.spec.gpus_per_node = resource_of(spec_json, "gpus_per_node");
    }
  }
  return j;
}

Result<JobId> Store::insert_job(const JobRow& row) {
  // The stored text; when it is the spec exactly (no invalid UTF-8 had to be replaced), the spec
  // also goes into the cache, so that placing the job right after need not parse it back.
  const nlohmann::json spec_json = job_spec_to_json(row.spec);
  std::string spec_text = json_text(spec_json);
  bool exact = true;
  try {
    exact = spec_json.dump() == spec_text;
  } catch (const std::exception&) {
    exact = false;  // invalid UTF-8: the stored text differs from the spec
  }
  if (auto r = execute(db_,
                       "INSERT INTO jobs(name, state, spec, infra_restarts, user_restarts, "
                       "next_attempt_ms, reason, created_ms, updated_ms, owner, team, grp) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       row.name, std::string(to_string(row.state)), spec_text, row.infra_restarts,
                       row.user_restarts, row.next_attempt_ms, row.reason, row.created_ms,
                       row.updated_ms, row.spec.owner, row.spec.team, row.spec.group);
      !r) {
    return r.error();
  }
  const JobId id = db_.last_insert_id();
  if (exact) {
    // Keyed by the text too (read_job), so a rolled-back insert's id never hands this spec on.
    if (spec_cache_.size() >= 16384) spec_cache_.clear();
    spec_cache_[id] = {std::move(spec_text), row.spec};
  }
  job_changes_.push_back({id, row.state, row.next_attempt_ms, row.spec.nodes,
                          row.spec.gpus_per_node, row.spec.priority});
  return id;
}

Result<std::optional<JobId>> StoreReader::newest_job_named(const std::string& name) {
  return query_one(
      db_, "SELECT id FROM jobs WHERE name = ? ORDER BY id DESC LIMIT 1",
      [](const Stmt& row) { return row.col_int(0); }, name);
}

Result<std::optional<JobRow>> StoreReader::job(JobId id) {
  static const std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?";
  return query_one(
      db_, sql, [this](const Stmt& row) { return read_job(row); }, id);
}

Result<std::vector<JobRow>> StoreReader::jobs_in_states(const std::vector<JobState>& states) {
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

Result<std::vector<std::pair<std::string, std::int64_t>>> StoreReader::tallies(
    const std::string& kind) {
  return query(
      db_, "SELECT key, n FROM tallies WHERE kind = ? ORDER BY key",
      [](const Stmt& row) {
        return std::pair<std::string, std::int64_t>{row.col_text(0), row.col_int(1)};
      },
      kind);
}

Result<std::vector<NoticeRow>> StoreReader::notices_after(std::int64_t id, int limit) {
  return query(
      db_,
      "SELECT id, at_ms, kind, message, job_id, attempt_no, cluster, node FROM notices "
      "WHERE id > ? ORDER BY id LIMIT ?",
      [](const Stmt& row) {
        NoticeRow n;
        n.id = row.col_int(0);
        n.at_ms = row.col_int(1);
        n.kind = row.col_text(2);
        n.message = row.col_text(3);
        if (!row.is_null(4)) n.job_id = row.col_int(4);
        if (!row.is_null(5)) n.attempt_no = static_cast<int>(row.col_int(5));
        n.cluster = row.col_text(6);
        n.node = row.col_text(7);
        return n;
      },
      id, limit);
}

Result<std::int64_t> StoreReader::last_notice_id() {
  auto st = db_.prepare("SELECT coalesce(MAX(id), 0) FROM notices");
  if (!st) return st.error();
  auto row = st->step();
  if (!row) return row.error();
  return st->col_int(0);
}

Result<std::int64_t> StoreReader::pending_action_count(const std::string& cluster) {
  auto st = db_.prepare("SELECT COUNT(*) FROM outbox WHERE cluster = ? AND done_ms IS NULL");
  if (!st) return st.error();
  st->bind(1, cluster);
  auto row = st->step();
  if (!row) return row.error();
  return st->col_int(0);
}

Result<std::vector<JobRow>> StoreReader::jobs(std::optional<JobState> state, int limit) {
  std::optional<std::string> name;
  if (state) name = std::string(to_string(*state));
  return query(
      db_,
      std::string("SELECT ") + kJobColumns +
          " FROM jobs WHERE (?1 IS NULL OR state = ?1) ORDER BY id DESC LIMIT ?2",
      [this](const Stmt& row) { return read_job(row); }, name, limit);
}

Result<std::vector<JobKey>> StoreReader::job_page_keys(const JobQuery& q) {
  // Every filter is a column with an index that ends in id, and the statement names only the
  // filters given ("?1 IS NULL OR ..." would keep SQLite from seeking), so a page costs what it
  // returns however many jobs the database holds and however deep the page is. It reads no
  // spec and runs no json_extract: rows come from job_listings, for the ids a cache lacks.
  std::string sql = "SELECT " + kKeyColumns + " FROM jobs WHERE 1";
  if (q.state) sql += " AND state = ?1";
  if (q.cluster) sql += " AND cluster = ?2";
  if (q.owner) sql += " AND owner = ?5";
  if (q.team) sql += " AND team = ?6";
  if (q.group) sql += " AND grp = ?7";
  if (q.before_id) sql += " AND id < ?3";
  sql += " ORDER BY id DESC LIMIT ?4";
  auto st = db_.prepare(sql);
  if (!st) return st.error();
  if (q.state) st->bind(1, std::string(to_string(*q.state)));
  if (q.cluster) st->bind(2, *q.cluster);
  if (q.before_id) st->bind(3, *q.before_id);
  st->bind(4, q.limit);
  if (q.owner) st->bind(5, *q.owner);
  if (q.team) st->bind(6, *q.team);
  if (q.group) st->bind(7, *q.group);
  return collect_rows(*st, read_job_key);
}

Result<std::optional<JobKey>> StoreReader::job_key(JobId id) {
  return query_one(db_, "SELECT " + kKeyColumns + " FROM jobs WHERE id = ?", read_job_key, id);
}

Result<std::vector<JobRow>> StoreReader::job_listings(const std::vector<JobId>& ids) {
  return query(db_,
               std::string("SELECT ") + kListingColumns +
                   " FROM jobs WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id DESC",
               read_job_listing, id_array(ids));
}

Result<std::vector<JobChange>> StoreReader::waiting_jobs() {
  return query(db_,
               "SELECT id, state, next_attempt_ms, json_extract(spec, '$.resources.nodes'), "
               "json_extract(spec, '$.resources.gpus_per_node'), "
               "COALESCE(json_extract(spec, '$.priority'), 0) FROM jobs "
               "WHERE state IN ('pending', 'resuming', 'staging') ORDER BY id",
               [](const Stmt& s) {
                 JobChange c;
                 c.id = s.col_int(0);
                 c.state = parse_job_state(s.col_text(1)).value_or(JobState::pending);
                 c.next_attempt_ms = s.col_opt_int(2);
                 c.nodes = static_cast<int>(s.col_int(3));
                 c.gpus_per_node = static_cast<int>(s.col_int(4));
                 c.priority = static_cast<int>(s.col_int(5));
                 return c;
               });
}

Result<std::vector<JobId>> StoreReader::unfinished_jobs_with_checkpoints() {
  return query(db_,
               "SELECT id FROM jobs WHERE state IN ('pending', 'placed', 'running', 'resuming', "
               "'staging') AND EXISTS (SELECT 1 FROM checkpoints c WHERE c.job_id = jobs.id) "
               "ORDER BY id",
               [](const Stmt& s) { return JobId{s.col_int(0)}; });
}

Result<void> Store::update_job(const JobRow& row, Millis now) {
  return write_job(row, row.state, row.state, nullptr, now);
}

Result<void> Store::write_job(const JobRow& row, JobState to, JobState believed,
                              const std::string* cluster, Millis now) {
  // The state the caller read is most often still the stored one: then the transition is checked
  // here and the UPDATE guards on it, with no read of the row first.
  const auto write = [&](std::optional<JobState> guard) {
    return execute(db_,
                   "UPDATE jobs SET state = ?1, infra_restarts = ?2, user_restarts = ?3, "
                   "next_attempt_ms = ?4, reason = ?5, updated_ms = ?6, "
                   "cluster = coalesce(?7, cluster) WHERE id = ?8 AND (?9 IS NULL OR state = ?9)",
                   std::string(to_string(to)), row.infra_restarts, row.user_restarts,
                   row.next_attempt_ms, row.reason, now,
                   cluster ? std::optional<std::string>(*cluster) : std::nullopt, row.id,
                   guard ? std::optional<std::string>(to_string(*guard)) : std::nullopt);
  };
  bool written = false;
  if (believed == to || can_transition(believed, to)) {
    if (auto r = write(believed); !r) return r;
    written = db_.changes() == 1;
  }
  if (!written) {
    // Only the stored state matters here; reading the whole row would parse the spec again.
    auto current = query_one(
        db_, "SELECT state FROM jobs WHERE id = ?", [](const Stmt& s) { return s.col_text(0); },
        row.id);
    if (!current) return current.error();
    if (!*current) return make_error(ErrorKind::not_found, "no job " + std::to_string(row.id));
    JobState from = parse_job_state(**current).value_or(JobState::failed);
    if (from != to && !can_transition(from, to)) {
      return refuse_transition("job", std::to_string(row.id), row.id, std::nullopt, now,
                               to_string(from), to_string(to));
    }
    if (auto r = write(std::nullopt); !r) return r;
  }
  job_changes_.push_back(
      {row.id, to, row.next_attempt_ms, row.spec.nodes, row.spec.gpus_per_node, row.spec.priority});
  return Ok{};
}

Result<void> Store::set_job_state(JobRow& row, JobState to, Millis now) {
  if (auto r = write_job(row, to, row.state, nullptr, now); !r) return r;
  row.state = to;
  row.updated_ms = now;
  return Ok{};
}

}  // namespace orch
