#pragma once
// A scripted SecretsApi: secrets kept in memory with their grants (the values too, so a test can
// check what arrived), or the shared forced failure. "from-file" is configured in the clusters
// file: setting, granting or deleting it is a conflict, as in the real registry.

#include <map>
#include <string>
#include <vector>

#include "tests/unit/web/fake_api_shared.h"
#include "web/secrets_api.h"

namespace orch::testing {

class FakeSecretsApi : public virtual SecretsApi, public virtual FakeApiShared {
 public:
  struct Held {
    std::string value;
    std::vector<std::string> teams;
    std::string by;
  };
  std::map<std::string, Held> secrets = {{"from-file", {"v", {"nlp"}, ""}}};

  Result<nlohmann::json> list_secrets() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto e = failure()) return *e;
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [name, s] : secrets) out.push_back(info(name, s));
    return nlohmann::json{{"secrets", out}};
  }
  Result<nlohmann::json> set_secret(const std::string& name, const std::string& value,
                                    const std::vector<std::string>& teams,
                                    const std::string& by) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto e = check_name(name)) return *e;
    secrets[name] = Held{value, teams, by};
    return info(name, secrets[name]);
  }
  Result<nlohmann::json> grant_secret(const std::string& name,
                                      const std::vector<std::string>& teams,
                                      const std::string& by) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto e = check_name(name)) return *e;
    auto it = secrets.find(name);
    if (it == secrets.end()) return make_error(ErrorKind::not_found, "no secret named " + name);
    it->second.teams = teams;
    it->second.by = by;
    return info(name, it->second);
  }
  Result<nlohmann::json> delete_secret(const std::string& name) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto e = check_name(name)) return *e;
    if (secrets.erase(name) == 0)
      return make_error(ErrorKind::not_found, "no secret named " + name);
    return nlohmann::json{{"name", name}, {"deleted", true}};
  }

 private:
  std::optional<Error> check_name(const std::string& name) {
    if (auto e = failure()) return e;
    if (name == "from-file") {
      return make_error(ErrorKind::conflict,
                        "secret \"from-file\" is configured in the clusters file");
    }
    return std::nullopt;
  }
  static nlohmann::json info(const std::string& name, const Held& s) {
    return {{"name", name},       {"teams", s.teams},   {"source", "api"},
            {"updated_by", s.by}, {"created_ms", 1000}, {"updated_ms", 2000}};
  }
};

}  // namespace orch::testing
