#pragma once
// A thin RAII layer over the sqlite3 C API: one connection, prepared statements with typed
// binds and reads. Errors are Results carrying SQLite's own message. Statements are prepared
// once per connection and reused (reset, bindings cleared) when the Stmt that used them goes;
// a statement still in use when the same SQL is asked for again gets a private copy.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scheduler/common/result.h"

// The C API's handles, declared here so that a file using Db needs no <sqlite3.h>: only
// sqlite_db.cpp and wal_checkpointer.cpp include it.
struct sqlite3;
struct sqlite3_stmt;

namespace orch {

class Stmt {
 public:
  // in_use: the cache slot's flag when the statement belongs to the connection's cache (it is
  // reset and handed back on destruction), else nullptr (it is finalized).
  Stmt(sqlite3* db, sqlite3_stmt* stmt, bool* in_use = nullptr)
      : db_(db), stmt_(stmt), in_use_(in_use) {}
  Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_), in_use_(other.in_use_) {
    other.stmt_ = nullptr;
    other.in_use_ = nullptr;
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& operator=(Stmt&&) = delete;
  ~Stmt();

  // Binds by 1-based position.
  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind_null(int i);
  template <typename T>
  Stmt& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }
  template <typename... Args>
  Stmt& bind_all(const Args&... args) {
    int i = 0;
    (bind(++i, args), ...);
    return *this;
  }

  // true: a row is ready; false: done. Errors are Results.
  Result<bool> step();
  Result<void> run();  // step to completion, for statements without rows

  bool is_null(int col) const;
  std::int64_t col_int(int col) const;
  double col_double(int col) const;
  std::string col_text(int col) const;
  std::optional<std::int64_t> col_opt_int(int col) const;
  std::optional<double> col_opt_double(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  bool* in_use_;
};

class Db {
 public:
  static Result<Db> open(const std::string& path);
  // The same, for a file that only this process's user may read (tokens, secrets, the audit
  // log): created 0600 before SQLite first opens it, and made so if it was not. ":memory:" and
  // URIs open as open() does.
  static Result<Db> open_private(const std::string& path);
  Db(Db&& other) noexcept : db_(other.db_), cache_(std::move(other.cache_)) { other.db_ = nullptr; }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  Db& operator=(Db&&) = delete;
  ~Db();

  Result<void> exec(const std::string& sql);
  Result<Stmt> prepare(std::string_view sql);
  std::int64_t last_insert_id() const;
  int changes() const;
  sqlite3* raw() const { return db_; }

 private:
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  // Looked up by the caller's text as it is: no copy of the SQL for a statement already cached.
  struct SqlHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view sql) const noexcept {
      return std::hash<std::string_view>{}(sql);
    }
  };
  using Cache = std::unordered_map<std::string, Cached, SqlHash, std::equal_to<>>;
  explicit Db(sqlite3* db) : db_(db), cache_(std::make_unique<Cache>()) {}
  sqlite3* db_;
  // On the heap so that a moved Db keeps the slots its live Stmts point into.
  std::unique_ptr<Cache> cache_;
};

// Steps st to the end and maps every row with read(const Stmt&).
template <typename F>
auto collect_rows(Stmt& st, F read) -> Result<std::vector<decltype(read(st))>> {
  std::vector<decltype(read(st))> out;
  for (;;) {
    auto row = st.step();
    if (!row) return row.error();
    if (!*row) return out;
    out.push_back(read(st));
  }
}

// The first row mapped by read, or nullopt when there is none.
template <typename F>
auto first_row(Stmt& st, F read) -> Result<std::optional<decltype(read(st))>> {
  auto row = st.step();
  if (!row) return row.error();
  if (!*row) return std::optional<decltype(read(st))>{};
  return std::optional<decltype(read(st))>{read(st)};
}

// One statement, start to end: prepare sql, bind args in order, then map the rows with read.
template <typename F, typename... Args>
auto query(Db& db, std::string_view sql, F read, const Args&... args)
    -> Result<std::vector<decltype(read(std::declval<const Stmt&>()))>> {
  auto st = db.prepare(sql);
  if (!st) return st.error();
  st->bind_all(args...);
  return collect_rows(*st, read);
}

template <typename F, typename... Args>
auto query_one(Db& db, std::string_view sql, F read, const Args&... args)
    -> Result<std::optional<decltype(read(std::declval<const Stmt&>()))>> {
  auto st = db.prepare(sql);
  if (!st) return st.error();
  st->bind_all(args...);
  return first_row(*st, read);
}

// A statement without rows (INSERT, UPDATE, DELETE).
template <typename... Args>
Result<void> execute(Db& db, std::string_view sql, const Args&... args) {
  auto st = db.prepare(sql);
  if (!st) return st.error();
  st->bind_all(args...);
  return st->run();
}

}  // namespace orch
