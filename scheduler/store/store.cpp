#include "scheduler/store/store.h"
#include "scheduler/model/json_text.h"

#include <algorithm>
#include <exception>
#include <iostream>
#include <iterator>
#include <string_view>

#include "scheduler/store/migrations.h"
#include "scheduler/store/sqlite_db.h"

namespace orch {

namespace {

// WAL lets REST reads and site workers read while the brain writes; NORMAL sync is durable
// across process crashes (the failure we must survive) and cheap. Reads map the file (up to
// 1 GiB): every connection shares the kernel's pages instead of copying them into a 2 MiB
// cache of its own, which a random read of a large history mostly misses. Writes still go
// through the page cache, and one of the brain's transactions (a round of 200 placements, each
// with its verdicts, attempt, outbox row and events) dirties more than 2 MiB: SQLite would
// spill pages to the WAL mid-transaction and write them again at the commit. 64 MiB holds a
// round; it is a limit, not an allocation (readers, which mostly read the map, use little).
Result<void> set_pragmas(Db& db) {
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON",
        "PRAGMA mmap_size=1073741824", "PRAGMA cache_size=-65536", "PRAGMA temp_store=MEMORY"}) {
    if (auto r = db.exec(pragma); !r) return r.error();
  }
  return Ok{};
}

}  // namespace

StoreReader::StoreReader(std::unique_ptr<Db> db) : conn_(std::move(db)), db_(*conn_) {}

StoreReader::~StoreReader() = default;

Result<std::unique_ptr<StoreReader>> StoreReader::open(const std::string& path) {
  auto db = Db::open(path);
  if (!db) return db.error();
  if (auto r = set_pragmas(*db); !r) return r.error();
  // A reader migrates nothing: a database the writer has not brought to this schema would be
  // read wrongly, so it is refused instead.
  auto version = schema_version(*db);
  if (!version) return version.error();
  if (*version != latest_schema_version()) {
    return make_error(ErrorKind::io,
                      "the state database " + path + " is at schema version " +
                          std::to_string(*version) + ", not " +
                          std::to_string(latest_schema_version()) +
                          ": open it with the server (which migrates it) before reading it");
  }
  // SQLite itself refuses every write on this connection from here on.
  if (auto r = db->exec("PRAGMA query_only=ON"); !r) return r.error();
  return std::unique_ptr<StoreReader>(new StoreReader(std::make_unique<Db>(std::move(*db))));
}

Store::Store(std::unique_ptr<Db> db) : StoreReader(std::move(db)) {}

Result<std::unique_ptr<Store>> Store::open(const std::string& path) {
  auto db = Db::open(path);
  if (!db) return db.error();
  if (auto r = set_pragmas(*db); !r) return r.error();
  if (auto r = migrate(*db); !r) return r.error();
  return std::unique_ptr<Store>(new Store(std::make_unique<Db>(std::move(*db))));
}

Result<void> Store::transaction(const std::function<Result<void>()>& body) {
  if (auto r = db_.exec("BEGIN IMMEDIATE"); !r) return r.error();
  job_changes_.clear();
  Result<void> result = Ok{};
  // An exception from the body (a bug, or a library that throws on odd input) must not leave
  // the transaction open: every later BEGIN would fail and the brain would be stuck for good.
  try {
    result = body();
  } catch (const std::exception& e) {
    result = make_error(ErrorKind::internal, std::string("internal error: ") + e.what());
  } catch (...) {
    result = make_error(ErrorKind::internal, "internal error (unknown exception)");
  }
  if (!result) {
    forget_transaction();
    (void)db_.exec("ROLLBACK");
    return result;
  }
  if (auto r = db_.exec("COMMIT"); !r) {
    forget_transaction();
    (void)db_.exec("ROLLBACK");
    return r.error();
  }
  return Ok{};
}

Error Store::refuse_transition(std::string_view kind, const std::string& who,
                               std::optional<JobId> job, std::optional<int> attempt_no, Millis at,
                               std::string_view from, std::string_view to) {
  std::string msg = "refused illegal " + std::string(kind) + " transition " + std::string(from) +
                    " -> " + std::string(to);
  std::cerr << "orchestrate: " << kind << " " << who << ": " << msg << "\n";
  (void)add_event(job, attempt_no, at, "illegal-transition", msg);
  return make_error(ErrorKind::conflict, std::string(kind) + " " + who + ": " + msg);
}

// ---- clusters ---------------------------------------------------------------------------

namespace {
constexpr const char* kClusterColumns =
    "name, health, unreachable_since_ms, message, admission, created_ms, burn_in_token, "
    "admission_ms, admission_reason, delivered_ms";

ClusterRow read_cluster(const Stmt& st) {
  ClusterRow c;
  c.name = st.col_text(0);
  c.health = parse_site_health(st.col_text(1)).value_or(SiteHealth::healthy);
  c.unreachable_since_ms = st.col_opt_int(2);
  c.message = st.col_text(3);
  c.admission = parse_admission(st.col_text(4)).value_or(Admission::active);
  c.created_ms = st.col_int(5);
  c.burn_in_token = st.col_text(6);
  c.admission_ms = st.col_opt_int(7);
  c.admission_reason = st.col_text(8);
  c.delivered_ms = st.col_opt_int(9);
  return c;
}
}  // namespace

Result<bool> Store::ensure_cluster(const std::string& name, Admission admission, Millis now) {
  ++capacity_epoch_;
  if (auto r = execute(
          db_, "INSERT OR IGNORE INTO clusters(name, admission, created_ms) VALUES (?, ?, ?)", name,
          std::string(to_string(admission)), now);
      !r) {
    return r.error();
  }
  return db_.changes() > 0;
}

Result<void> Store::insert_added_cluster(const AddedClusterRow& row) {
  return execute(db_,
                 "INSERT INTO added_clusters(name, source, document, added_ms) VALUES (?, ?, ?, ?)",
                 row.name, row.source, row.document, row.added_ms);
}

Result<std::vector<AddedClusterRow>> StoreReader::added_clusters() {
  return query(
      db_, "SELECT name, source, document, added_ms FROM added_clusters ORDER BY added_ms, name",
      [](const Stmt& st) {
        AddedClusterRow r;
        r.name = st.col_text(0);
        r.source = st.col_text(1);
        r.document = st.col_text(2);
        r.added_ms = st.col_int(3);
        return r;
      });
}

Result<std::vector<ClusterRow>> StoreReader::clusters() {
  return query(db_, std::string("SELECT ") + kClusterColumns + " FROM clusters ORDER BY name",
               read_cluster);
}

Result<std::optional<ClusterRow>> StoreReader::cluster(const std::string& name) {
  return query_one(db_, std::string("SELECT ") + kClusterColumns + " FROM clusters WHERE name = ?",
                   read_cluster, name);
}

Result<void> Store::update_cluster(const ClusterRow& c) {
  ++capacity_epoch_;
  return execute(db_,
                 "UPDATE clusters SET health = ?, unreachable_since_ms = ?, message = ?, "
                 "admission = ?, burn_in_token = ?, admission_ms = ?, admission_reason = ?, "
                 "delivered_ms = ? WHERE name = ?",
                 std::string(to_string(c.health)), c.unreachable_since_ms, c.message,
                 std::string(to_string(c.admission)), c.burn_in_token, c.admission_ms,
                 c.admission_reason, c.delivered_ms, c.name);
}

// ---- nodes ------------------------------------------------------------------------------

namespace {
constexpr const char* kNodeColumns =
    "cluster, name, gpus, healthy, reason, seen_ms, state, quarantines, quarantined_at_ms, "
    "state_reason, probe_token, gpus_busy, cpus, memory_mb, gpus_ours_gone, work_failures, "
    "work_gpu_h";

NodeRow read_node(const Stmt& s) {
  NodeRow n;
  n.cluster = s.col_text(0);
  n.name = s.col_text(1);
  n.gpus = static_cast<int>(s.col_int(2));
  n.healthy = s.col_int(3) != 0;
  n.reason = s.col_text(4);
  n.seen_ms = s.col_int(5);
  n.state = parse_node_state(s.col_text(6)).value_or(NodeState::active);
  n.quarantines = static_cast<int>(s.col_int(7));
  n.quarantined_at_ms = s.col_opt_int(8);
  n.state_reason = s.col_text(9);
  n.probe_token = s.col_text(10);
  n.gpus_busy = static_cast<int>(s.col_int(11));
  n.cpus = static_cast<int>(s.col_int(12));
  n.memory_mb = s.col_int(13);
  n.gpus_ours_gone = static_cast<int>(s.col_int(14));
  n.work_failures = static_cast<int>(s.col_int(15));
  n.work_gpu_hours = s.col_double(16);
  return n;
}
}  // namespace

Result<std::vector<NodeRow>> StoreReader::nodes(const std::string& cluster) {
  static const std::string sql =
      std::string("SELECT ") + kNodeColumns + " FROM nodes WHERE cluster = ? ORDER BY name";
  return query(db_, sql, read_node, cluster);
}

Result<std::vector<NodeRow>> StoreReader::quarantined_nodes(const std::string& cluster) {
  static const std::string sql = std::string("SELECT ") + kNodeColumns +
                                 " FROM nodes WHERE cluster = ? AND state = 'quarantined' "
                                 "ORDER BY name";
  return query(db_, sql, read_node, cluster);
}

Result<std::vector<Store::NodeCount>> StoreReader::node_counts() {
  return query(db_,
               "SELECT cluster, COUNT(*), SUM(state != 'active') FROM nodes GROUP BY cluster "
               "ORDER BY cluster",
               [](const Stmt& s) {
                 return NodeCount{s.col_text(0), static_cast<int>(s.col_int(1)),
                                  static_cast<int>(s.col_int(2))};
               });
}

Result<std::vector<NodeRow>> StoreReader::all_nodes() {
  return query(db_, std::string("SELECT ") + kNodeColumns + " FROM nodes ORDER BY cluster, name",
               read_node);
}

Result<std::optional<NodeRow>> StoreReader::node(const std::string& cluster,
                                                 const std::string& name) {
  return query_one(
      db_, std::string("SELECT ") + kNodeColumns + " FROM nodes WHERE cluster = ? AND name = ?",
      read_node, cluster, name);
}

Result<void> Store::set_node_standing(const NodeRow& n) {
  ++capacity_epoch_;
  return execute(db_,
                 "UPDATE nodes SET state = ?, quarantines = ?, quarantined_at_ms = ?, "
                 "state_reason = ?, probe_token = ? WHERE cluster = ? AND name = ?",
                 std::string(to_string(n.state)), n.quarantines, n.quarantined_at_ms,
                 n.state_reason, n.probe_token, n.cluster, n.name);
}

Result<void> Store::add_node_work_failure(const std::string& cluster, const std::string& node) {
  return execute(
      db_, "UPDATE nodes SET work_failures = work_failures + 1 WHERE cluster = ? AND name = ?",
      cluster, node);
}

Result<void> Store::upsert_node(const NodeRow& n) {
  ++capacity_epoch_;
  return execute(db_,
                 "INSERT INTO nodes(cluster, name, gpus, healthy, reason, seen_ms, gpus_busy, "
                 "cpus, memory_mb) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(cluster, name) "
                 "DO UPDATE SET gpus = excluded.gpus, healthy = excluded.healthy, "
                 "reason = excluded.reason, seen_ms = excluded.seen_ms, "
                 "gpus_busy = excluded.gpus_busy, cpus = excluded.cpus, "
                 "memory_mb = excluded.memory_mb",
                 n.cluster, n.name, n.gpus, n.healthy ? 1 : 0, n.reason, n.seen_ms, n.gpus_busy,
                 n.cpus, n.memory_mb);
}

Result<void> Store::mark_nodes_seen(const std::string& cluster, Millis at_ms) {
  // A listing newer than our attempts' ends counts only what is busy now: what they left in the
  // last one goes (capacity moves only where there was some).
  if (auto r = execute(db_,
                       "UPDATE nodes SET gpus_ours_gone = 0 WHERE cluster = ? AND gpus_ours_gone "
                       "!= 0",
                       cluster);
      !r) {
    return r;
  }
  if (db_.changes() > 0) ++capacity_epoch_;
  // seen_ms is no part of capacity: the epoch stays.
  return execute(db_, "UPDATE nodes SET seen_ms = ? WHERE cluster = ?", at_ms, cluster);
}

namespace {

// The events and node events a webhook may be told of (NoticeRow), copied to notices as they are
// written, in the same transaction.
bool is_notice(std::string_view kind, bool node_event) {
  constexpr std::string_view kEventKinds[] = {"succeeded", "failed",   "attempt-ended",
                                              "mfu-drop",  "io-stall", "checkpoint-lost",
                                              "site-down", "budget"};
  constexpr std::string_view kNodeEventKinds[] = {"quarantined", "retired"};
  const auto has = [&](const auto& kinds) {
    return std::find(std::begin(kinds), std::end(kinds), kind) != std::end(kinds);
  };
  return node_event ? has(kNodeEventKinds) : has(kEventKinds);
}

}  // namespace

Result<std::int64_t> Store::add_node_event(const NodeEventRow& e) {
  if (auto r = execute(db_,
                       "INSERT INTO node_events(cluster, node, at_ms, kind, message, job_id, "
                       "attempt_no, incident) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       e.cluster, e.node, e.at_ms, e.kind, e.message, e.job_id, e.attempt_no,
                       e.incident);
      !r) {
    return r.error();
  }
  const std::int64_t id = db_.last_insert_id();
  if (is_notice(e.kind, true)) {
    if (auto r = execute(db_,
                         "INSERT INTO notices(at_ms, kind, message, job_id, attempt_no, cluster, "
                         "node) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         e.at_ms, e.kind, e.message, e.job_id, e.attempt_no, e.cluster, e.node);
        !r) {
      return r.error();
    }
  }
  return id;
}

// ---- events -----------------------------------------------------------------------------

Result<void> Store::add_event(std::optional<JobId> job, std::optional<int> attempt_no, Millis at,
                              const std::string& kind, const std::string& message) {
  if (auto r = execute(
          db_,
          "INSERT INTO events(job_id, attempt_no, at_ms, kind, message) VALUES (?, ?, ?, ?, ?)",
          job, attempt_no, at, kind, message);
      !r) {
    return r;
  }
  if (!is_notice(kind, false)) return Ok{};
  return execute(db_,
                 "INSERT INTO notices(at_ms, kind, message, job_id, attempt_no) "
                 "VALUES (?, ?, ?, ?, ?)",
                 at, kind, message, job, attempt_no);
}

Result<std::vector<EventRow>> StoreReader::events_of(JobId job, int limit) {
  auto read = [](const Stmt& s) {
    EventRow e;
    e.id = s.col_int(0);
    e.job_id = s.col_opt_int(1);
    if (auto a = s.col_opt_int(2)) e.attempt_no = static_cast<int>(*a);
    e.at_ms = s.col_int(3);
    e.kind = s.col_text(4);
    e.message = s.col_text(5);
    return e;
  };
  // The newest `limit` events, returned oldest first.
  auto out = query(db_,
                   "SELECT id, job_id, attempt_no, at_ms, kind, message FROM events "
                   "WHERE job_id = ? ORDER BY id DESC LIMIT ?",
                   read, job, limit);
  if (out) std::reverse(out->begin(), out->end());
  return out;
}

// ---- outbox -----------------------------------------------------------------------------

Result<std::int64_t> Store::enqueue(const OutboxRow& row) {
  ++work_epoch_;
  const std::string kind(to_string(row.kind));
  if (auto r = execute(
          db_,
          "INSERT INTO outbox(cluster, kind, token, payload, created_ms) VALUES (?, ?, ?, ?, ?)",
          row.cluster, kind, row.token, json_text(row.payload), row.created_ms);
      !r) {
    return r.error();
  }
  return db_.last_insert_id();
}

Result<std::vector<OutboxRow>> StoreReader::pending_actions(const std::string& cluster) {
  auto read = [](const Stmt& s) {
    OutboxRow o;
    o.id = s.col_int(0);
    o.cluster = s.col_text(1);
    const std::string kind = s.col_text(2);
    o.kind = parse_action_kind(kind).value_or(ActionKind::launch);
    o.token = s.col_text(3);
    o.payload = nlohmann::json::parse(s.col_text(4), nullptr, false);
    o.created_ms = s.col_int(5);
    return o;
  };
  return query(db_,
               "SELECT id, cluster, kind, token, payload, created_ms FROM outbox "
               "WHERE cluster = ? AND done_ms IS NULL ORDER BY id",
               read, cluster);
}

Result<void> Store::mark_action_done(std::int64_t id, Millis at) {
  return execute(db_, "UPDATE outbox SET done_ms = ? WHERE id = ? AND done_ms IS NULL", at, id);
}

Result<void> Store::mark_actions_done_for_token(const std::string& token, Millis at) {
  return execute(db_, "UPDATE outbox SET done_ms = ? WHERE token = ? AND done_ms IS NULL", at,
                 token);
}

}  // namespace orch
