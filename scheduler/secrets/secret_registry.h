#pragma once
// Every secret a job may name, with its grants: those the clusters file configures (`secrets:`,
// read from their sources on the server when it starts and on every reload) and those an
// administrator set through the API (SecretStore). A job names a secret; it gets the value only
// when its team is granted. Thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/secrets/secret_resolver.h"
#include "scheduler/secrets/secret_store.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

// A secret as `secret list` shows it: never its value.
struct SecretInfo {
  std::string name;
  std::vector<std::string> teams;  // empty: every team
  std::string source;              // "api" or "clusters file"
  std::string updated_by;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
};

class SecretRegistry final : public SecretResolver {
 public:
  SecretRegistry(std::unique_ptr<SecretStore> store, const Clock& clock);

  // Reads every configured source (regular files only, at most kMaxSecretBytes, within a
  // deadline; variables of this process). All or nothing: on an error nothing changes, and the
  // message names the secret and its source (for the administrator who wrote the file).
  Result<void> configure(const std::vector<ConfiguredSecret>& configured);

  // At submit: every reference names a secret that exists and is granted to team.
  Result<void> check(const std::map<std::string, std::string>& refs, const std::string& team) const;
  Result<std::map<std::string, std::string>> resolve(const std::map<std::string, std::string>& refs,
                                                     const std::string& team) const override;

  // The API's: conflict for a name the clusters file configures (change it there); invalid for
  // a bad name, team or value.
  Result<SecretInfo> set(const std::string& name, const std::string& value,
                         const std::vector<std::string>& teams, const std::string& by);
  Result<SecretInfo> grant(const std::string& name, const std::vector<std::string>& teams,
                           const std::string& by);
  Result<void> remove(const std::string& name);
  std::vector<SecretInfo> list() const;  // by name

 private:
  struct Configured {
    std::string value;
    std::vector<std::string> teams;
    std::int64_t read_ms = 0;
  };
  Result<void> check_configurable(const std::string& name) const;
  // The value of one reference, or why not.
  Result<std::string> value_of(const std::string& var, const std::string& secret,
                               const std::string& team) const;
  Result<std::string> find_value(const std::string& var, const std::string& secret,
                                 const std::string& team) const;

  std::unique_ptr<SecretStore> store_;
  const Clock& clock_;
  mutable std::mutex mu_;  // guards configured_
  std::map<std::string, Configured> configured_;
};

// Whether team may use a secret granted to teams (empty: every team, and jobs without one).
bool secret_granted(const std::vector<std::string>& teams, const std::string& team);

}  // namespace orch
