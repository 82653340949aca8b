// Issue 37's acceptance on the real server: every field a `user` token can send, and every line
// a job can print, that names a path, a variable, a URL or a host is tried against four things an
// administrator never granted, placed by the test: the server's admin token, an SSH key, a
// kubeconfig's token (files only the server's user may read) and another user's checkpoints.
// None is ever delivered (in an answer, a log, a job's output or a state file), named in an
// error as existing or not (the answer for an existing file and a missing one is the same), or
// removed. The fields come from tables: the job spec's keys below, and every route that changes
// something from GET /api/v1/openapi.json (a new route is tried without touching this file).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSshKey = "ssh-key-material-9d41f0a7c3e2";
constexpr const char* kKubeToken = "kube-bearer-token-6b2a8e1f4d07";
constexpr const char* kServerOnlyVar = "ORCH_TEST_SERVER_ONLY_7c1e";
constexpr const char* kServerOnlyValue = "server-variable-value-2f8d";

// A job spec key that names a path, a variable, a URL or a host, and how to aim it at a target.
struct SpecField {
  std::string name;
  std::function<std::string(const std::string& target)> yaml;  // the spec's extra lines
};

std::string base_job(const std::string& name) {
  return "name: " + name +
         "\ncommand: 'true'\nresources: {nodes: 1, gpus_per_node: 1}\n"
         "placement: {allowed: [alpha]}\n";
}

const std::vector<SpecField>& spec_fields() {
  static const std::vector<SpecField> fields = {
      {"secret_env file",
       [](const std::string& t) { return "secret_env: {K: {file: " + t + "}}\n"; }},
      {"secret_env secret",
       [](const std::string& t) { return "secret_env: {K: {secret: \"" + t + "\"}}\n"; }},
      {"checkpoint.dir", [](const std::string& t) { return "checkpoint: {dir: " + t + "}\n"; }},
      {"checkpoint.dir up",
       [](const std::string& t) { return "checkpoint: {dir: ../../.." + t + "}\n"; }},
      {"kubernetes host_path",
       [](const std::string& t) {
         return "kubernetes: {volumes: [{name: v, host_path: " + t + ", mount: /m}]}\n";
       }},
      {"datasets", [](const std::string& t) { return "datasets: [\"" + t + "\"]\n"; }},
      {"placement.allowed",
       [](const std::string& t) { return "placement: {allowed: [\"" + t + "\"]}\n"; }},
      {"checkpoint.replicate.to",
       [](const std::string& t) { return "checkpoint: {replicate: {to: \"" + t + "\"}}\n"; }},
  };
  return fields;
}

class ReachE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    setenv(kServerOnlyVar, kServerOnlyValue, 1);
    // Rates high enough for the tables' hundred submissions (fair use is e2e_fair_use_test's).
    start_with("server: {rate_limits: {user: {per_s: 1000, burst: 1000}}}\n" +
               local_clusters_yaml(2, 2));
    unsetenv(kServerOnlyVar);
    private_dir_ = dir_->path() + "/server-only";
    fs::create_directories(private_dir_);
    ::chmod(private_dir_.c_str(), 0700);
    ssh_key_ = private_dir_ + "/id_ed25519";
    kubeconfig_ = private_dir_ + "/kubeconfig";
    write_file(ssh_key_, std::string("-----BEGIN OPENSSH PRIVATE KEY-----\n") + kSshKey + "\n");
    write_file(kubeconfig_, std::string("apiVersion: v1\nusers:\n- name: u\n  user: {token: ") +
                                kKubeToken + "}\n");
    ::chmod(ssh_key_.c_str(), 0600);
    ::chmod(kubeconfig_.c_str(), 0600);
    HttpResponse made =
        call(url_, "POST", "/api/v1/tokens",
             json{{"name", "ursula"}, {"role", "user"}, {"teams", {"vision"}}}.dump());
    ASSERT_EQ(made.status, 201) << made.body;
    user_ = json::parse(made.body)["token"].get<std::string>();
  }

  // Paths the test must not let a user reach, and what must never be shown.
  std::vector<std::string> targets() const {
    return {state_ + "/admin.token", ssh_key_, kubeconfig_, private_dir_, state_};
  }
  std::vector<std::string> secrets() const {
    return {server_->admin_token(), kSshKey, kKubeToken, kServerOnlyValue};
  }
  HttpResponse as_user(const std::string& method, const std::string& target,
                       const std::string& body, const std::string& type = "application/json") {
    return call_as(url_, user_, method, target, body, type);
  }
  void expect_shows_none(const std::string& what, const std::string& text) {
    for (const std::string& s : secrets()) {
      EXPECT_EQ(text.find(s), std::string::npos) << what << " shows a secret: " << text;
    }
  }
  // A refusal must read the same for an existing target and a missing one: no oracle.
  static std::string without(std::string text, const std::string& path) {
    for (std::size_t at; (at = text.find(path)) != std::string::npos;)
      text.replace(at, path.size(), "P");
    return text;
  }
  void expect_targets_intact() {
    EXPECT_NE(read_file(ssh_key_).find(kSshKey), std::string::npos);
    EXPECT_NE(read_file(kubeconfig_).find(kKubeToken), std::string::npos);
    EXPECT_NE(read_file(state_ + "/admin.token").find(server_->admin_token()), std::string::npos);
  }

  std::string private_dir_, ssh_key_, kubeconfig_, user_;
};

TEST_F(ReachE2eTest, NoFieldOfAJobSpecReachesWhatAnAdministratorDidNotGrant) {
  int jobs = 0;
  for (const SpecField& field : spec_fields()) {
    for (const std::string& target : targets()) {
      const std::string missing = target + ".missing";
      HttpResponse hit =
          as_user("POST", "/api/v1/jobs", base_job("r") + field.yaml(target), "application/yaml");
      HttpResponse miss =
          as_user("POST", "/api/v1/jobs", base_job("r") + field.yaml(missing), "application/yaml");
      expect_shows_none(field.name, hit.body);
      EXPECT_EQ(hit.status, miss.status) << field.name << " " << target << ": " << hit.body;
      if (hit.status >= 400) {
        EXPECT_EQ(without(hit.body, target), without(miss.body, missing))
            << field.name << ": the answer tells whether " << target << " exists";
      } else {
        jobs += 2;
      }
    }
  }
  // Whatever was accepted (a dataset or a host_path a local site never reads) ran or waits;
  // none of it reached a target.
  json list = get_json(url_, "/api/v1/jobs?limit=1000");
  for (const auto& j : list["jobs"]) {
    if (is_final(j)) continue;
    call(url_, "POST", "/api/v1/jobs/" + std::to_string(j["id"].get<std::int64_t>()) + "/cancel");
  }
  expect_targets_intact();
  EXPECT_EQ(static_cast<int>(list["jobs"].size()), jobs);
}

TEST_F(ReachE2eTest, EveryOtherChangeAUserSendsIsRefusedWhateverItsBodyNames) {
  json doc = get_json(url_, "/api/v1/openapi.json");
  ASSERT_TRUE(doc.is_object());
  // A body that names every target in every field a route might read as a path or a host.
  json body = {{"name", "x"},          {"cluster", "alpha"},
               {"path", ssh_key_},     {"reason", kubeconfig_},
               {"value", "v"},         {"teams", json::array()},
               {"to", "beta"},         {"url", "http://10.0.0.1/"},
               {"text", private_dir_}, {"summary", ssh_key_},
               {"down", true},         {"role", "admin"}};
  int tried = 0;
  for (const auto& [path, methods] : doc["paths"].items()) {
    for (const auto& [method, op] : methods.items()) {
      std::string upper = method;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (upper == "GET" || upper == "HEAD") continue;
      std::string target = path;
      for (const auto& [from, to] :
           std::map<std::string, std::string>{{"{id}", "1"},
                                              {"{name}", "alpha"},
                                              {"{node}", "alpha-n0"},
                                              {"{sha256}", std::string(64, 'a')}}) {
        for (std::size_t at; (at = target.find(from)) != std::string::npos;) {
          target.replace(at, from.size(), to);
        }
      }
      HttpResponse r = as_user(upper, target, body.dump());
      ++tried;
      expect_shows_none(upper + " " + path, r.body);
      // A user submits and cancels jobs and uploads their code (a body that is no archive of
      // that hash is refused, naming nothing of the server's).
      const bool users_route = path == "/api/v1/jobs" || path == "/api/v1/jobs/{id}/cancel" ||
                               path == "/api/v1/code/{sha256}";
      if (!users_route) {
        EXPECT_EQ(r.status, 403) << upper << " " << path << ": " << r.body;
      }
    }
  }
  EXPECT_GT(tried, 20);
  expect_targets_intact();
}

TEST_F(ReachE2eTest, AJobsOutputAndCommandReachNothingOfTheServer) {
  // The job names the server's files in checkpoint lines, directly, through "..", and through a
  // link it makes in its own directory; as root its command also tries to read them.
  const bool root = ::geteuid() == 0;
  std::string lines;
  int step = 1;
  for (const std::string& t :
       {private_dir_, ssh_key_, state_, std::string("$ORCH_CHECKPOINT_DIR/../../..") + state_,
        std::string("$ORCH_CHECKPOINT_DIR/link")}) {
    lines += "  echo '@orchestrate {\"event\":\"checkpoint\",\"step\":" + std::to_string(step++) +
             ",\"path\":\"'\"" + t + "\"'\"}'; sleep 0.2\n";
  }
  std::string reads;
  if (root) {
    for (const std::string& t : targets())
      reads += "  cat '" + t + "' 2>&1 | head -c 300 || true\n";
  }
  const std::string spec = "name: out\ncommand: |\n  ln -s '" + private_dir_ +
                           "' \"$ORCH_CHECKPOINT_DIR/link\"\n" + lines + reads +
                           "  sleep 2\n"
                           "resources: {nodes: 1, gpus_per_node: 1}\n"
                           "checkpoint: {replicate: {keep: 1, copies: 2}}\n";
  HttpResponse r = as_user("POST", "/api/v1/jobs", spec, "application/yaml");
  ASSERT_EQ(r.status, 201) << r.body;
  const std::int64_t id = json::parse(r.body)["id"].get<std::int64_t>();
  json done = wait_final(id);
  ASSERT_FALSE(done.is_null());
  int bad_lines = 0;
  for (const auto& e : events(id)) bad_lines += e.value("kind", "") == "bad-progress-line";
  // The four that name a path outside the job's directory are refused as they are read; the
  // link inside it is registered, refused at the site (it resolves outside) and never listed,
  // copied or deleted.
  EXPECT_GE(bad_lines, 4) << describe_job(url_, id);
  json ckpts = get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/checkpoints");
  for (const auto& c : ckpts["checkpoints"]) {
    EXPECT_NE(c.value("path", "").find("/job-" + std::to_string(id) + "/"), std::string::npos)
        << c.dump();
    EXPECT_NE(c.value("verified", true), true) << c.dump();
    for (const auto& copy : c["replicas"])
      EXPECT_EQ(copy.value("state", ""), "refused") << c.dump();
  }
  expect_targets_intact();
  EXPECT_TRUE(fs::exists(private_dir_));
  // Nothing shown anywhere: answers, logs, the job's output, every state file but the token's
  // own, every site directory (a copy would be there).
  expect_shows_none("logs", call(url_, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs").body);
  expect_shows_none("events", events(id).dump());
  for (const auto& entry : fs::recursive_directory_iterator(state_)) {
    if (!entry.is_regular_file() || entry.path() == state_ + "/admin.token") continue;
    expect_shows_none(entry.path().string(), read_file(entry.path().string()));
  }
  for (int i = 1; i <= starts_; ++i) expect_shows_none("server log", read_file(log_path(i)));
}

}  // namespace
}  // namespace orch::e2e
