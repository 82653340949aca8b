#include "scheduler/secrets/secret_store.h"

#include "scheduler/common/base64.h"
#include "scheduler/common/text.h"
#include "scheduler/store/sqlite_db.h"

namespace orch {
namespace {

// Values are kept in base64: a secret may hold any byte but NUL, and TEXT should hold text.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS secrets (
  name TEXT PRIMARY KEY,
  value_base64 TEXT NOT NULL,
  teams TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_by TEXT NOT NULL,
  updated_ms INTEGER NOT NULL
);
PRAGMA user_version = 1;
)sql";

StoredSecret read_row(const Stmt& st) {
  StoredSecret s;
  s.name = st.col_text(0);
  s.value = decode_base64(st.col_text(1)).value_or(std::string());
  s.teams = split(st.col_text(2), ',');  // team names never hold a comma
  s.created_by = st.col_text(3);
  s.created_ms = st.col_int(4);
  s.updated_by = st.col_text(5);
  s.updated_ms = st.col_int(6);
  return s;
}

}  // namespace

SecretStore::SecretStore(std::unique_ptr<Db> db, const Clock& clock)
    : db_(std::move(db)), clock_(clock) {}

SecretStore::~SecretStore() = default;

Result<std::unique_ptr<SecretStore>> SecretStore::open(const std::string& path,
                                                       const Clock& clock) {
  auto db = Db::open_private(path);
  if (!db) return db.error();
  auto owned = std::make_unique<Db>(std::move(*db));
  if (auto r = owned->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"); !r)
    return r.error();
  if (auto r = owned->exec(kSchema); !r) return r.error();
  std::unique_ptr<SecretStore> store(new SecretStore(std::move(owned), clock));
  if (auto r = store->load(); !r) return r.error();
  return store;
}

Result<void> SecretStore::load() {
  auto rows = query(*db_,
                    "SELECT name, value_base64, teams, created_by, created_ms, updated_by, "
                    "updated_ms FROM secrets",
                    read_row);
  if (!rows) return rows.error();
  std::lock_guard<std::mutex> lock(mu_);
  secrets_.clear();
  for (auto& s : *rows) secrets_.emplace(s.name, std::move(s));
  return {};
}

Result<void> SecretStore::write(const StoredSecret& s) {
  return execute(*db_,
                 "INSERT INTO secrets (name, value_base64, teams, created_by, created_ms, "
                 "updated_by, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                 "ON CONFLICT(name) DO UPDATE SET value_base64 = ?2, teams = ?3, "
                 "updated_by = ?6, updated_ms = ?7",
                 s.name, encode_base64(s.value), join(s.teams, ","), s.created_by, s.created_ms,
                 s.updated_by, s.updated_ms);
}

Result<StoredSecret> SecretStore::put(const std::string& name, const std::string& value,
                                      const std::vector<std::string>& teams,
                                      const std::string& by) {
  std::lock_guard<std::mutex> lock(mu_);
  StoredSecret s;
  if (auto it = secrets_.find(name); it != secrets_.end()) s = it->second;
  const std::int64_t now = clock_.now_ms();
  if (s.name.empty()) {
    s.name = name;
    s.created_by = by;
    s.created_ms = now;
  }
  s.value = value;
  s.teams = teams;
  s.updated_by = by;
  s.updated_ms = now;
  if (auto r = write(s); !r) return r.error();
  secrets_[name] = s;
  return s;
}

Result<StoredSecret> SecretStore::regrant(const std::string& name,
                                          const std::vector<std::string>& teams,
                                          const std::string& by) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = secrets_.find(name);
  if (it == secrets_.end()) {
    return make_error(ErrorKind::not_found, "no secret named \"" + name + "\"");
  }
  StoredSecret s = it->second;
  s.teams = teams;
  s.updated_by = by;
  s.updated_ms = clock_.now_ms();
  if (auto r = write(s); !r) return r.error();
  it->second = s;
  return s;
}

Result<void> SecretStore::remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (secrets_.count(name) == 0) {
    return make_error(ErrorKind::not_found, "no secret named \"" + name + "\"");
  }
  if (auto r = execute(*db_, "DELETE FROM secrets WHERE name = ?1", name); !r) return r.error();
  secrets_.erase(name);
  return {};
}

std::optional<StoredSecret> SecretStore::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = secrets_.find(name);
  if (it == secrets_.end()) return std::nullopt;
  return it->second;
}

std::vector<StoredSecret> SecretStore::all() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StoredSecret> out;
  for (const auto& [name, s] : secrets_) out.push_back(s);
  return out;
}

}  // namespace orch
