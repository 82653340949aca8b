#include "server/pushed_record_store.h"

#include <iostream>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "scheduler/model/task_alert.h"
#include "scheduler/model/task_fault.h"
#include "scheduler/store/sqlite_db.h"

namespace orch {
namespace {

using nlohmann::json;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS pushed_tasks (
  token TEXT NOT NULL,
  rank INTEGER NOT NULL,
  node TEXT NOT NULL,
  last_seq INTEGER NOT NULL,
  received_ms INTEGER NOT NULL,
  record TEXT NOT NULL,
  checkpoint_step INTEGER,
  PRIMARY KEY (token, rank)
) WITHOUT ROWID;
PRAGMA user_version = 1;
)sql";

constexpr Millis kSweepEveryMs = 60'000;

std::optional<std::int64_t> int_member(const json& record, const char* key) {
  if (!record.is_object() || !record.contains(key) || !record[key].is_number_integer()) {
    return std::nullopt;
  }
  return record[key].get<std::int64_t>();
}

// The step of the newest checkpoint record among records, if any.
std::optional<std::int64_t> newest_checkpoint(const std::vector<PushRecord>& records) {
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (it->event != "checkpoint") continue;
    if (auto step = int_member(json::parse(it->json, nullptr, false), "step")) return step;
  }
  return std::nullopt;
}

PushedTask read_task(const Stmt& st) {
  PushedTask t;
  t.rank = static_cast<int>(st.col_int(0));
  t.node = st.col_text(1);
  t.last_seq = st.col_int(2);
  t.received_ms = st.col_int(3);
  const json record = json::parse(st.col_text(4), nullptr, false);
  t.checkpoint_step = st.col_opt_int(5);
  if (record.is_object()) {
    if (record.contains("event") && record["event"].is_string()) {
      t.event = record["event"].get<std::string>();
    }
    t.at_ms = int_member(record, "at_ms").value_or(0);
    if (t.event == "exit") {
      if (auto code = int_member(record, "exit_code")) t.exit_code = static_cast<int>(*code);
      if (auto signal = int_member(record, "signal")) t.signal = static_cast<int>(*signal);
    }
    t.fault = task_fault_of(record);
    t.stall = task_alert_of(record);
  }
  return t;
}

}  // namespace

PushedRecordStore::PushedRecordStore(std::unique_ptr<Db> db, const Clock& clock,
                                     AttemptLifeOf life_of)
    : db_(std::move(db)), clock_(clock), life_of_(std::move(life_of)) {
  serving_since_ms_ = clock_.now_ms();
  next_sweep_ms_ = serving_since_ms_ + kSweepEveryMs;
}

PushedRecordStore::~PushedRecordStore() = default;

Result<std::unique_ptr<PushedRecordStore>> PushedRecordStore::open(const std::string& path,
                                                                   const Clock& clock,
                                                                   AttemptLifeOf life_of) {
  // Records name nodes, paths and faults of every job: the server's user's alone.
  auto db = Db::open_private(path);
  if (!db) return db.error();
  auto owned = std::make_unique<Db>(std::move(*db));
  if (auto r = owned->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !r) {
    return r.error();
  }
  if (auto r = owned->exec(kSchema); !r) return r.error();
  return std::unique_ptr<PushedRecordStore>(
      new PushedRecordStore(std::move(owned), clock, std::move(life_of)));
}

Result<PushAnswer> PushedRecordStore::push(const PushBatch& batch) {
  auto life = life_of_(batch.token);
  if (!life) return life.error();
  if (*life != AttemptLife::live) {
    PushAnswer gone;
    gone.gone = true;
    gone.why = "attempt " + batch.token.substr(0, 200) +
               (*life == AttemptLife::ended ? " has ended" : " is not known to this server") +
               ": stop pushing (the agent's event file keeps every record)";
    return gone;
  }
  bool sweep_due = false;
  Result<PushAnswer> answer = PushAnswer{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    answer = store(batch);
    const Millis now = clock_.now_ms();
    if (now >= next_sweep_ms_) {
      next_sweep_ms_ = now + kSweepEveryMs;
      sweep_due = true;
    }
  }
  if (sweep_due) {
    if (auto swept = sweep(); !swept) {
      std::cerr << "orchestrate: cannot sweep pushed records: " << swept.error().message << "\n";
    }
  }
  return answer;
}

// One transaction: the task's row read, the batch's new records folded in. Under mu_.
Result<PushAnswer> PushedRecordStore::store(const PushBatch& batch) {
  if (auto r = db_->exec("BEGIN IMMEDIATE"); !r) return r.error();
  auto done = [this](Result<PushAnswer> out) -> Result<PushAnswer> {
    if (auto r = db_->exec(out ? "COMMIT" : "ROLLBACK"); !r && out) return r.error();
    return out;
  };
  auto held = query_one(
      *db_, "SELECT last_seq, checkpoint_step FROM pushed_tasks WHERE token = ?1 AND rank = ?2",
      [](const Stmt& st) { return std::make_pair(st.col_int(0), st.col_opt_int(1)); }, batch.token,
      batch.rank);
  if (!held) return done(held.error());
  const std::int64_t last_seq = *held ? (*held)->first : 0;
  std::vector<PushRecord> fresh;
  for (const PushRecord& r : batch.records) {
    if (r.seq > last_seq) fresh.push_back(r);
  }
  PushAnswer answer;
  answer.last_seq = last_seq;
  if (fresh.empty()) return done(answer);
  std::optional<std::int64_t> step = newest_checkpoint(fresh);
  if (!step && *held) step = (*held)->second;
  const PushRecord& newest = fresh.back();
  auto r =
      execute(*db_,
              "INSERT INTO pushed_tasks (token, rank, node, last_seq, received_ms, record, "
              "checkpoint_step) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
              "ON CONFLICT (token, rank) DO UPDATE SET "
              "node = CASE WHEN excluded.node = '' THEN node ELSE excluded.node END, "
              "last_seq = excluded.last_seq, received_ms = excluded.received_ms, "
              "record = excluded.record, checkpoint_step = excluded.checkpoint_step",
              batch.token, batch.rank, batch.node, newest.seq, clock_.now_ms(), newest.json, step);
  if (!r) return done(r.error());
  answer.stored = static_cast<std::int64_t>(fresh.size());
  answer.last_seq = newest.seq;
  return done(answer);
}

std::vector<PushedTask> PushedRecordStore::tasks(const std::string& token) {
  std::lock_guard<std::mutex> lock(mu_);
  auto rows = query(*db_,
                    "SELECT rank, node, last_seq, received_ms, record, checkpoint_step "
                    "FROM pushed_tasks WHERE token = ?1 ORDER BY rank",
                    read_task, token);
  if (!rows) {
    std::cerr << "orchestrate: cannot read the records pushed for " << token.substr(0, 200) << ": "
              << rows.error().message << "\n";
    return {};
  }
  return std::move(*rows);
}

std::int64_t PushedRecordStore::serving_since_ms() const {
  std::lock_guard<std::mutex> lock(mu_);
  return serving_since_ms_;
}

void PushedRecordStore::mark_serving() {
  std::lock_guard<std::mutex> lock(mu_);
  serving_since_ms_ = clock_.now_ms();
}

Result<int> PushedRecordStore::sweep(int at_most) {
  Result<std::vector<std::string>> quiet = std::vector<std::string>{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    quiet = query(
        *db_,
        "SELECT token FROM pushed_tasks WHERE token > ?1 GROUP BY token "
        "HAVING MAX(received_ms) < ?2 ORDER BY token LIMIT ?3",
        [](const Stmt& st) { return st.col_text(0); }, swept_to_,
        clock_.now_ms() - kQuietBeforeSweepMs, at_most);
    if (quiet) swept_to_ = static_cast<int>(quiet->size()) < at_most ? "" : quiet->back();
  }
  if (!quiet) return quiet.error();
  int deleted = 0;
  for (const std::string& token : *quiet) {
    auto life = life_of_(token);  // outside the lock: it reads another database
    if (!life) return life.error();
    if (*life == AttemptLife::live) continue;
    std::lock_guard<std::mutex> lock(mu_);
    if (auto r = execute(*db_, "DELETE FROM pushed_tasks WHERE token = ?1", token); !r) {
      return r.error();
    }
    ++deleted;
  }
  return deleted;
}

}  // namespace orch
