#pragma once
// What the secret routes (secret_routes.cpp) ask of the backend: the registry of secrets a job
// may name (scheduler/secrets). No answer ever holds a value.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"

namespace orch {

class SecretsApi {
 public:
  virtual ~SecretsApi() = default;
  // {"secrets": [{name, teams, source, updated_by, created_ms, updated_ms}]}, by name.
  virtual Result<nlohmann::json> list_secrets() = 0;
  // Creates or replaces a secret; teams empty: every team may use it. by: the caller.
  virtual Result<nlohmann::json> set_secret(const std::string& name, const std::string& value,
                                            const std::vector<std::string>& teams,
                                            const std::string& by) = 0;
  virtual Result<nlohmann::json> grant_secret(const std::string& name,
                                              const std::vector<std::string>& teams,
                                              const std::string& by) = 0;
  virtual Result<nlohmann::json> delete_secret(const std::string& name) = 0;
};

}  // namespace orch
