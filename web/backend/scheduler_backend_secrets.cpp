// The secret routes' backend (SecretsApi): the registry's names, grants and ages, never a value.
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

nlohmann::json secret_json(const SecretInfo& s) {
  return {{"name", s.name},
          {"teams", s.teams},
          {"source", s.source},
          {"updated_by", s.updated_by},
          {"created_ms", s.created_ms},
          {"updated_ms", s.updated_ms}};
}

}  // namespace

Result<SecretRegistry*> SchedulerBackend::registry() const {
  if (secrets_ == nullptr) {
    return make_error(ErrorKind::unsupported, "this server keeps no secrets");
  }
  return secrets_;
}

Result<nlohmann::json> SchedulerBackend::list_secrets() {
  auto secrets = registry();
  if (!secrets) return secrets.error();
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : (*secrets)->list()) out.push_back(secret_json(s));
  return nlohmann::json{{"secrets", out}};
}

Result<nlohmann::json> SchedulerBackend::set_secret(const std::string& name,
                                                    const std::string& value,
                                                    const std::vector<std::string>& teams,
                                                    const std::string& by) {
  auto secrets = registry();
  if (!secrets) return secrets.error();
  auto info = (*secrets)->set(name, value, teams, by);
  if (!info) return info.error();
  return secret_json(*info);
}

Result<nlohmann::json> SchedulerBackend::grant_secret(const std::string& name,
                                                      const std::vector<std::string>& teams,
                                                      const std::string& by) {
  auto secrets = registry();
  if (!secrets) return secrets.error();
  auto info = (*secrets)->grant(name, teams, by);
  if (!info) return info.error();
  return secret_json(*info);
}

Result<nlohmann::json> SchedulerBackend::delete_secret(const std::string& name) {
  auto secrets = registry();
  if (!secrets) return secrets.error();
  if (auto r = (*secrets)->remove(name); !r) return r.error();
  return nlohmann::json{{"name", name}, {"deleted", true}};
}

}  // namespace orch
