#pragma once
// The secrets an administrator registered through the API (`orchestrate secret set`), in a
// SQLite file of their own (<state>/secrets.db, owner-only): a name, the value, the teams it is
// granted to, and who set it when. Apart from the scheduler's database so that the state a
// person copies to debug or report a problem never carries a secret, and so that only this
// class, never the brain or a reader of the store, can read a value. Safe to use from any
// thread (one connection behind a mutex); every secret is also held in memory (there are
// few, and each is at most kMaxSecretBytes).

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/common/result.h"

namespace orch {

class Db;

struct StoredSecret {
  std::string name;
  std::string value;
  std::vector<std::string> teams;  // empty: every team
  std::string created_by;
  std::int64_t created_ms = 0;
  std::string updated_by;
  std::int64_t updated_ms = 0;
};

class SecretStore {
 public:
  // Opens (creating it owner-only when missing) the file at path; ":memory:" for tests.
  static Result<std::unique_ptr<SecretStore>> open(const std::string& path, const Clock& clock);
  ~SecretStore();
  SecretStore(const SecretStore&) = delete;
  SecretStore& operator=(const SecretStore&) = delete;

  // Creates or replaces name's value and grants.
  Result<StoredSecret> put(const std::string& name, const std::string& value,
                           const std::vector<std::string>& teams, const std::string& by);
  // Replaces name's grants only (not_found when there is no such secret).
  Result<StoredSecret> regrant(const std::string& name, const std::vector<std::string>& teams,
                               const std::string& by);
  Result<void> remove(const std::string& name);  // not_found when there is none
  std::optional<StoredSecret> find(const std::string& name) const;
  std::vector<StoredSecret> all() const;  // by name

 private:
  SecretStore(std::unique_ptr<Db> db, const Clock& clock);
  Result<void> load();
  Result<void> write(const StoredSecret& s);
  mutable std::mutex mu_;
  std::unique_ptr<Db> db_;
  const Clock& clock_;
  std::map<std::string, StoredSecret> secrets_;
};

}  // namespace orch
