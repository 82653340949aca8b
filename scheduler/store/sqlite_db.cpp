#include "scheduler/store/sqlite_db.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace orch {
namespace {

Error sql_error(sqlite3* db, const std::string& what) {
  return make_error(ErrorKind::io, what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

Stmt::~Stmt() {
  if (!stmt_) return;
  if (!in_use_) {
    sqlite3_finalize(stmt_);
    return;
  }
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  *in_use_ = false;
}

Stmt& Stmt::bind(int i, std::int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> Stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sql_error(db_, "database statement failed");
}

Result<void> Stmt::run() {
  for (;;) {
    auto r = step();
    if (!r) return r.error();
    if (!*r) return Ok{};
  }
}

bool Stmt::is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}
std::int64_t Stmt::col_int(int col) const {
  return sqlite3_column_int64(stmt_, col);
}
double Stmt::col_double(int col) const {
  return sqlite3_column_double(stmt_, col);
}
std::string Stmt::col_text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
           : std::string();
}
std::optional<std::int64_t> Stmt::col_opt_int(int col) const {
  if (is_null(col)) return std::nullopt;
  return col_int(col);
}
std::optional<double> Stmt::col_opt_double(int col) const {
  if (is_null(col)) return std::nullopt;
  return col_double(col);
}

namespace {

// Process-wide settings, made once before SQLite starts: no memory statistics (they take a
// global mutex on every allocation, and nothing reads them).
void configure_sqlite_once() {
  static const bool done = [] {
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);  // refused once SQLite runs: harmless
    return true;
  }();
  (void)done;
}

}  // namespace

Result<Db> Db::open(const std::string& path) {
  configure_sqlite_once();
  sqlite3* raw = nullptr;
  // URI: a "file:NAME?mode=memory&cache=shared" path is one in-memory database that several
  // connections share (the simulator's brain and workers); an ordinary path reads as before.
  // NOMUTEX: a Db (and its statement cache) is used by one thread at a time, as the Store
  // above it requires, so SQLite's per-call connection mutex would only cost (a tenth of a
  // page read, measured).
  int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    Error e = sql_error(raw, "cannot open state database " + path);
    sqlite3_close(raw);
    return e;
  }
  // A bigger lookaside than the default (100 slots): a brain event's statements make thousands
  // of small allocations, which then come from the connection's own pool, not malloc.
  (void)sqlite3_db_config(raw, SQLITE_DBCONFIG_LOOKASIDE, nullptr, 1200, 1000);
  sqlite3_busy_timeout(raw, 5000);
  sqlite3_extended_result_codes(raw, 1);
  return Db(raw);
}

Result<Db> Db::open_private(const std::string& path) {
  if (path != ":memory:" && path.rfind("file:", 0) != 0) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      return make_error(ErrorKind::io, "cannot create " + path + ": " + std::strerror(errno));
    }
    const int rc = ::fchmod(fd, 0600);
    const int err = errno;
    ::close(fd);
    if (rc != 0) {
      return make_error(ErrorKind::io,
                        "cannot make " + path + " owner-only: " + std::strerror(err));
    }
  }
  return open(path);
}

Db::~Db() {
  if (cache_) {
    for (auto& [sql, c] : *cache_) sqlite3_finalize(c.stmt);
  }
  if (db_) sqlite3_close_v2(db_);
}

Result<void> Db::exec(const std::string& sql) {
  char* msg = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) {
    std::string m = msg ? msg : sqlite3_errmsg(db_);
    sqlite3_free(msg);
    return make_error(ErrorKind::io, "database error: " + m);
  }
  return Ok{};
}

Result<Stmt> Db::prepare(std::string_view sql) {
  auto it = cache_->find(sql);
  const bool added = it == cache_->end();
  if (added) it = cache_->emplace(std::string(sql), Cached{}).first;
  Cached& slot = it->second;
  if (!added && slot.stmt && !slot.in_use) {
    slot.in_use = true;
    return Stmt(db_, slot.stmt, &slot.in_use);
  }
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    if (added) cache_->erase(it);
    return sql_error(db_, "cannot prepare statement");
  }
  if (slot.stmt) return Stmt(db_, stmt);  // the cached one is busy: a private copy
  slot.stmt = stmt;
  slot.in_use = true;
  return Stmt(db_, stmt, &slot.in_use);
}

std::int64_t Db::last_insert_id() const {
  return sqlite3_last_insert_rowid(db_);
}
int Db::changes() const {
  return sqlite3_changes(db_);
}

}  // namespace orch
