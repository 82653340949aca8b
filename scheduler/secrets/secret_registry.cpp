#include "scheduler/secrets/secret_registry.h"

#include <algorithm>

#include "scheduler/common/text.h"
#include "scheduler/secrets/secret_file.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {
namespace {

std::string team_text(const std::string& team) {
  return team.empty() ? std::string("jobs without a team") : "team " + team;
}

Result<void> check_name_and_teams(const std::string& name, const std::vector<std::string>& teams) {
  if (!yaml::is_name(name)) {
    return make_error(ErrorKind::invalid,
                      "a secret's name must be 1 to 64 letters, digits, \".\", \"_\" or \"-\"");
  }
  for (const auto& t : teams) {
    if (!yaml::is_name(t)) {
      return make_error(ErrorKind::invalid,
                        "a team's name must be 1 to 64 letters, digits, \".\", \"_\" or \"-\"");
    }
  }
  return {};
}

SecretInfo info_of(const StoredSecret& s) {
  return {s.name, s.teams, "api", s.updated_by, s.created_ms, s.updated_ms};
}

}  // namespace

bool secret_granted(const std::vector<std::string>& teams, const std::string& team) {
  return teams.empty() || std::find(teams.begin(), teams.end(), team) != teams.end();
}

SecretRegistry::SecretRegistry(std::unique_ptr<SecretStore> store, const Clock& clock)
    : store_(std::move(store)), clock_(clock) {}

Result<void> SecretRegistry::configure(const std::vector<ConfiguredSecret>& configured) {
  std::map<std::string, Configured> next;
  for (const auto& c : configured) {
    auto value = read_secret_source_value("secret " + c.name, c.source);
    if (!value) return value.error();
    next[c.name] = Configured{std::move(*value), c.teams, clock_.now_ms()};
  }
  std::lock_guard<std::mutex> lock(mu_);
  configured_ = std::move(next);
  return {};
}

Result<std::string> SecretRegistry::value_of(const std::string& var, const std::string& secret,
                                             const std::string& team) const {
  auto v = find_value(var, secret, team);
  if (!v) {
    Error e = v.error();
    e.where = "secret_env." + var;
    return e;
  }
  return v;
}

Result<std::string> SecretRegistry::find_value(const std::string& var, const std::string& secret,
                                               const std::string& team) const {
  if (secret.empty()) {
    return make_error(ErrorKind::invalid,
                      "secret_env " + var +
                          " names a file or variable of the server, which a job may no longer "
                          "do; resubmit the job with {secret: NAME}");
  }
  std::string value;
  std::vector<std::string> teams;
  bool found = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = configured_.find(secret); it != configured_.end()) {
      value = it->second.value;
      teams = it->second.teams;
      found = true;
    }
  }
  if (!found) {
    if (auto stored = store_->find(secret)) {
      value = std::move(stored->value);
      teams = std::move(stored->teams);
      found = true;
    }
  }
  if (!found) {
    return make_error(ErrorKind::invalid, "secret_env " + var + " names secret \"" + secret +
                                              "\", which does not exist (orchestrate secret "
                                              "list shows the names; an administrator adds one "
                                              "with orchestrate secret set)");
  }
  if (!secret_granted(teams, team)) {
    return make_error(ErrorKind::forbidden, "secret_env " + var + " names secret \"" + secret +
                                                "\", which is not granted to " + team_text(team) +
                                                " (it is granted to " + join(teams) +
                                                "); an administrator grants it with orchestrate " +
                                                "secret grant " + secret + " --teams ...");
  }
  return value;
}

Result<void> SecretRegistry::check(const std::map<std::string, std::string>& refs,
                                   const std::string& team) const {
  for (const auto& [var, secret] : refs) {
    if (auto v = value_of(var, secret, team); !v) return v.error();
  }
  return {};
}

Result<std::map<std::string, std::string>> SecretRegistry::resolve(
    const std::map<std::string, std::string>& refs, const std::string& team) const {
  std::map<std::string, std::string> out;
  for (const auto& [var, secret] : refs) {
    auto v = value_of(var, secret, team);
    if (!v) return v.error();
    out[var] = std::move(*v);
  }
  return out;
}

Result<void> SecretRegistry::check_configurable(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (configured_.count(name)) {
    return make_error(ErrorKind::conflict, "secret \"" + name +
                                               "\" is configured in the clusters file; change "
                                               "it there and reload");
  }
  return {};
}

Result<SecretInfo> SecretRegistry::set(const std::string& name, const std::string& value,
                                       const std::vector<std::string>& teams,
                                       const std::string& by) {
  if (auto ok = check_name_and_teams(name, teams); !ok) return ok.error();
  if (auto ok = check_secret_value("secret " + name, value); !ok) return ok.error();
  if (auto ok = check_configurable(name); !ok) return ok.error();
  auto stored = store_->put(name, value, teams, by);
  if (!stored) return stored.error();
  return info_of(*stored);
}

Result<SecretInfo> SecretRegistry::grant(const std::string& name,
                                         const std::vector<std::string>& teams,
                                         const std::string& by) {
  if (auto ok = check_name_and_teams(name, teams); !ok) return ok.error();
  if (auto ok = check_configurable(name); !ok) return ok.error();
  auto stored = store_->regrant(name, teams, by);
  if (!stored) return stored.error();
  return info_of(*stored);
}

Result<void> SecretRegistry::remove(const std::string& name) {
  if (auto ok = check_configurable(name); !ok) return ok.error();
  return store_->remove(name);
}

std::vector<SecretInfo> SecretRegistry::list() const {
  std::map<std::string, SecretInfo> by_name;
  for (const auto& s : store_->all()) by_name[s.name] = info_of(s);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, c] : configured_) {
    by_name[name] = SecretInfo{name, c.teams, "clusters file", "", c.read_ms, c.read_ms};
  }
  std::vector<SecretInfo> out;
  out.reserve(by_name.size());
  for (auto& [name, info] : by_name) out.push_back(std::move(info));
  return out;
}

}  // namespace orch
