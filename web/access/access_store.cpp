#include "web/access/access_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "scheduler/common/text.h"
#include "scheduler/store/sqlite_db.h"
#include "web/access/attempt_credential.h"
#include "web/access/token.h"

namespace orch {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_by TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  revoked_ms INTEGER,
  teams TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS tokens_live_name ON tokens(name) WHERE revoked_ms IS NULL;
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ms INTEGER NOT NULL,
  user TEXT NOT NULL,
  role TEXT NOT NULL,
  method TEXT NOT NULL,
  route TEXT NOT NULL,
  target TEXT NOT NULL,
  status INTEGER NOT NULL,
  result TEXT NOT NULL,
  remote TEXT NOT NULL,
  count INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS attempt_key (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  hex TEXT NOT NULL
);
PRAGMA user_version = 1;
)sql";

// Two hex digits per byte (what to_hex wrote); "" when text is not that.
std::string from_hex(const std::string& text) {
  auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  std::string out;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
    const int hi = digit(text[i]);
    const int lo = digit(text[i + 1]);
    if (hi < 0 || lo < 0) return "";
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return text.size() % 2 == 0 ? out : "";
}

TokenRow read_token(const Stmt& st) {
  TokenRow t;
  t.id = st.col_int(0);
  t.name = st.col_text(1);
  t.role = parse_role(st.col_text(2)).value_or(Role::viewer);
  t.created_by = st.col_text(3);
  t.created_ms = st.col_int(4);
  t.revoked_ms = st.col_opt_int(5);
  t.teams = split(st.col_text(6), ',');  // team names never hold a comma
  return t;
}

AuditRow read_audit(const Stmt& st) {
  AuditRow a;
  a.id = st.col_int(0);
  a.at_ms = st.col_int(1);
  a.user = st.col_text(2);
  a.role = st.col_text(3);
  a.method = st.col_text(4);
  a.route = st.col_text(5);
  a.target = st.col_text(6);
  a.status = static_cast<int>(st.col_int(7));
  a.result = st.col_text(8);
  a.remote = st.col_text(9);
  a.count = st.col_int(10);
  return a;
}

// A column that access.db files made before it lack (issue 37: audit.count, each old row one
// request; tokens.teams, old tokens bound to no team), added with its default.
Result<void> add_column(Db& db, const std::string& table, const std::string& column,
                        const std::string& declaration) {
  auto has = query_one(
      db, "SELECT 1 FROM pragma_table_info('" + table + "') WHERE name = '" + column + "'",
      [](const Stmt&) { return 1; });
  if (!has) return has.error();
  if (*has) return {};
  return db.exec("ALTER TABLE " + table + " ADD COLUMN " + column + " " + declaration + ";");
}

constexpr const char* kTokenColumns =
    "SELECT id, name, role, created_by, created_ms, revoked_ms, teams FROM tokens";

}  // namespace

bool valid_token_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

AccessStore::AccessStore(std::unique_ptr<Db> db, const Clock& clock)
    : db_(std::move(db)), clock_(clock) {}

AccessStore::~AccessStore() = default;

Result<std::unique_ptr<AccessStore>> AccessStore::open(const std::string& path,
                                                       const Clock& clock) {
  // It holds the token hashes and who did what: owner-only before SQLite first opens it.
  auto db = Db::open_private(path);
  if (!db) return db.error();
  auto owned = std::make_unique<Db>(std::move(*db));
  if (auto r = owned->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !r)
    return r.error();
  if (auto r = owned->exec(kSchema); !r) return r.error();
  if (auto r = add_column(*owned, "audit", "count", "INTEGER NOT NULL DEFAULT 1"); !r)
    return r.error();
  if (auto r = add_column(*owned, "tokens", "teams", "TEXT NOT NULL DEFAULT ''"); !r)
    return r.error();
  std::unique_ptr<AccessStore> store(new AccessStore(std::move(owned), clock));
  if (auto r = store->load(); !r) return r.error();
  if (auto r = store->load_attempt_key(); !r) return r.error();
  return store;
}

// The key attempt credentials are derived with: made once, kept in this owner-only file, so a
// restarted server takes the credentials its running agents hold.
Result<void> AccessStore::load_attempt_key() {
  auto read = [this] {
    return query_one(*db_, "SELECT hex FROM attempt_key WHERE id = 1",
                     [](const Stmt& st) { return st.col_text(0); });
  };
  auto held = read();
  if (!held) return held.error();
  if (!*held) {
    auto bytes = random_bytes(kAttemptKeyBytes);
    if (!bytes) return bytes.error();
    const std::string hex =
        to_hex(reinterpret_cast<const unsigned char*>(bytes->data()), bytes->size());
    if (auto r = execute(*db_, "INSERT OR IGNORE INTO attempt_key (id, hex) VALUES (1, ?1)", hex);
        !r)
      return r.error();
    held = read();
    if (!held) return held.error();
  }
  attempt_key_ = *held ? from_hex(**held) : "";
  if (attempt_key_.size() != kAttemptKeyBytes) {
    return make_error(ErrorKind::io,
                      "access.db's attempt key is damaged (not " +
                          std::to_string(kAttemptKeyBytes) +
                          " bytes in hex); delete its row (attempt_key) to make a new one");
  }
  return {};
}

std::string AccessStore::attempt_credential(std::string_view token) const {
  return orch::attempt_credential(attempt_key_, token);
}

bool AccessStore::attempt_credential_valid(std::string_view token,
                                           std::string_view credential) const {
  return attempt_credential_matches(attempt_key_, token, credential);
}

Result<void> AccessStore::load() {
  auto rows =
      query(*db_, "SELECT hash, name, role, teams FROM tokens WHERE revoked_ms IS NULL",
            [](const Stmt& st) {
              return std::pair<std::string, Identity>(
                  st.col_text(0),
                  Identity{st.col_text(1), parse_role(st.col_text(2)).value_or(Role::viewer),
                           split(st.col_text(3), ',')});
            });
  if (!rows) return rows.error();
  std::lock_guard<std::mutex> lock(mu_);
  live_.clear();
  for (auto& [hash, who] : *rows) live_.emplace(std::move(hash), std::move(who));
  return {};
}

Result<std::string> AccessStore::create_token(const std::string& name, Role role,
                                              const std::string& created_by,
                                              const std::vector<std::string>& teams,
                                              const BeforeLive& before_live) {
  for (const auto& team : teams) {
    if (!valid_token_name(team)) {
      return make_error(ErrorKind::invalid,
                        "a team's name must be 1 to 64 letters, digits, \".\", \"_\" or \"-\", "
                        "got \"" +
                            team.substr(0, 80) + "\"");
    }
  }
  if (!valid_token_name(name)) {
    return make_error(
        ErrorKind::invalid,
        "a token's name (its user) must be 1 to 64 letters, digits, \".\", \"_\" or \"-\", "
        "got \"" +
            name.substr(0, 80) + "\"");
  }
  if (role == Role::open || role == Role::attempt) {
    return make_error(ErrorKind::invalid, std::string("no token can have role ") + to_string(role));
  }
  auto token = new_token();
  if (!token) return token.error();
  const std::string hash = token_hash(*token);
  const std::string taken_message = "\"" + name +
                                    "\" already has a live token; revoke it first (orchestrate "
                                    "token revoke " +
                                    name + ")";
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto taken = query_one(
        *db_, "SELECT 1 FROM tokens WHERE name = ?1 AND revoked_ms IS NULL",
        [](const Stmt&) { return 1; }, name);
    if (!taken) return taken.error();
    if (*taken) return make_error(ErrorKind::conflict, taken_message);
  }
  // Whatever must hold the token before it works (the first admin's file) is done first, and
  // outside the lock (it may take its time, or read the store): a crash in between leaves a
  // file with a token that never went live, never a live token that nobody holds.
  if (before_live) {
    if (auto r = before_live(*token); !r) return r.error();
  }
  std::lock_guard<std::mutex> lock(mu_);
  // The unique index of live names refuses a token made for the same name meanwhile.
  if (auto r = execute(*db_,
                       "INSERT INTO tokens (name, role, hash, created_by, created_ms, teams) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                       name, std::string(to_string(role)), hash, created_by, clock_.now_ms(),
                       join(teams, ","));
      !r) {
    return r.error().message.find("UNIQUE") != std::string::npos
               ? make_error(ErrorKind::conflict, taken_message)
               : r.error();
  }
  live_.emplace(hash, Identity{name, role, teams});
  return *token;
}

Result<std::vector<TokenRow>> AccessStore::tokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return query(*db_, std::string(kTokenColumns) + " ORDER BY revoked_ms IS NOT NULL, name, id",
               read_token);
}

Result<TokenRow> AccessStore::revoke_token(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto row = query_one(*db_, std::string(kTokenColumns) + " WHERE name = ?1 AND revoked_ms IS NULL",
                       read_token, name);
  if (!row) return row.error();
  if (!*row) {
    return make_error(ErrorKind::not_found,
                      "\"" + name.substr(0, 80) + "\" has no live token (orchestrate token list)");
  }
  const std::int64_t now = clock_.now_ms();
  if (auto r = execute(*db_, "UPDATE tokens SET revoked_ms = ?1 WHERE id = ?2", now, (*row)->id);
      !r) {
    return r.error();
  }
  for (auto it = live_.begin(); it != live_.end(); ++it) {
    if (it->second.user == name) {
      live_.erase(it);
      break;
    }
  }
  TokenRow out = **row;
  out.revoked_ms = now;
  return out;
}

std::optional<Identity> AccessStore::identify(std::string_view token) const {
  if (!looks_like_token(token)) return std::nullopt;
  const std::string hash = token_hash(token);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(hash);
  if (it == live_.end()) return std::nullopt;
  return it->second;
}

bool AccessStore::has_live_admin() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [hash, who] : live_) {
    if (who.role == Role::admin) return true;
  }
  return false;
}

Result<void> AccessStore::record(AuditRow row) {
  std::lock_guard<std::mutex> lock(mu_);
  row.at_ms = clock_.now_ms();
  return execute(*db_,
                 "INSERT INTO audit (at_ms, user, role, method, route, target, status, result, "
                 "remote, count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                 row.at_ms, row.user, row.role, row.method, row.route, row.target, row.status,
                 row.result, row.remote, std::max<std::int64_t>(1, row.count));
}

Result<AuditPage> AccessStore::audit(int limit, std::optional<std::int64_t> before) const {
  constexpr const char* kColumns =
      "SELECT id, at_ms, user, role, method, route, target, status, result, remote, count "
      "FROM audit";
  std::lock_guard<std::mutex> lock(mu_);
  auto rows = before
                  ? query(*db_, std::string(kColumns) + " WHERE id < ?1 ORDER BY id DESC LIMIT ?2",
                          read_audit, *before, limit + 1)
                  : query(*db_, std::string(kColumns) + " ORDER BY id DESC LIMIT ?1", read_audit,
                          limit + 1);
  if (!rows) return rows.error();
  AuditPage page;
  page.rows = std::move(*rows);
  if (page.rows.size() > static_cast<std::size_t>(limit)) {
    page.rows.resize(static_cast<std::size_t>(limit));
    page.next = page.rows.back().id;
  }
  return page;
}

}  // namespace orch
