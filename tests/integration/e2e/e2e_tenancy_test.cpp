// Issue 37 on the real server: tenants who cannot reach each other or the server. Secrets are
// given by an administrator's grant and named by jobs, never read from a path or a variable a
// user names; teams and priorities are bound to tokens; the CLI sends a token only where it was
// told to find one.
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <mutex>
#include <string>

#include "tests/integration/e2e/e2e_fixture.h"
#include "web/http/http_server.h"
#include "web/http/problem_response.h"

namespace orch::e2e {
namespace {

// A token of role `role` bound to `teams`, made through the API with the admin token.
std::string make_token(const std::string& url, const std::string& name, const std::string& role,
                       const std::vector<std::string>& teams) {
  const json body = {{"name", name}, {"role", role}, {"teams", teams}};
  HttpResponse r = call(url, "POST", "/api/v1/tokens", body.dump());
  EXPECT_EQ(r.status, 201) << r.body;
  const json made = json::parse(r.body, nullptr, false);
  return made.is_object() ? made.value("token", "") : "";
}

std::string sha256_of(const std::string& text) {
  ProcessResult r =
      run_process({"/bin/sh", "-c", "printf %s '" + text + "' | sha256sum"}, milliseconds(10000));
  return r.output.substr(0, 64);
}

class TenancyE2eTest : public E2eTest {
 protected:
  const std::string value_ = "hf-secret-5b1c0e9d7a";
  void SetUp() override {
    E2eTest::SetUp();
    nina_ = make_token(url_, "nina", "user", {"nlp"});
    vic_ = make_token(url_, "vic", "user", {"vision"});
    write_file(dir_->path() + "/hf.token", value_ + "\n");
  }
  HttpResponse submit_as(const std::string& token, const std::string& yaml) {
    return call_as(url_, token, "POST", "/api/v1/jobs", yaml, "application/yaml");
  }
  static std::string secret_job(const std::string& source) {
    return "name: with-secret\n"
           "command: 'printf %s \"$HF_TOKEN\" | sha256sum'\n"
           "resources: {nodes: 1, gpus_per_node: 1}\n"
           "secret_env: {HF_TOKEN: " +
           source + "}\n";
  }
  std::string nina_, vic_;
};

TEST_F(TenancyE2eTest, AnAdministratorsSecretReachesOnlyTheJobsOfTheTeamsItIsGrantedTo) {
  ProcessResult set =
      cli({"secret", "set", "hf", "--from-file", dir_->path() + "/hf.token", "--teams", "nlp"});
  ASSERT_EQ(set.exit_code, 0) << set.output;
  EXPECT_NE(set.output.find("granted to nlp"), std::string::npos) << set.output;

  HttpResponse granted = submit_as(nina_, secret_job("{secret: hf}"));
  ASSERT_EQ(granted.status, 201) << granted.body;
  const std::int64_t id = json::parse(granted.body)["id"].get<std::int64_t>();
  json done = wait_final(id);
  EXPECT_EQ(done["state"], "succeeded") << describe_job(url_, id);
  EXPECT_EQ(done["team"], "nlp") << "a job without a team runs for its owner's first";
  HttpResponse log = call(url_, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs");
  EXPECT_NE(log.body.find(sha256_of(value_)), std::string::npos) << log.body;

  HttpResponse other = submit_as(vic_, secret_job("{secret: hf}"));
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_NE(other.body.find("not granted to team vision"), std::string::npos) << other.body;

  ProcessResult list = cli({"secret", "list"});
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("hf"), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find(value_), std::string::npos) << list.output;
  expect_secrets_nowhere({value_}, id);
}

TEST_F(TenancyE2eTest, AFifoADirectoryAndAHugeFileAreRefusedAtSetWithoutWaiting) {
  const std::string fifo = dir_->path() + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = dir_->path() + "/big";
  const int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 1LL << 30), 0);
  ::close(fd);
  const auto start = SteadyClock::now();
  for (const auto& [path, why] : std::vector<std::pair<std::string, std::string>>{
           {fifo, "is a FIFO"}, {dir_->path(), "is a directory"}, {big, "is larger than"}}) {
    ProcessResult r = cli({"secret", "set", "bad", "--from-file", path});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(why), std::string::npos) << r.output;
  }
  EXPECT_LT(SteadyClock::now() - start, std::chrono::seconds(10)) << "nothing waited on a source";
  json secrets = get_json(url_, "/api/v1/secrets");
  EXPECT_TRUE(secrets["secrets"].empty()) << secrets.dump();
  EXPECT_EQ(call(url_, "GET", "/healthz").status, 200);
}

TEST_F(TenancyE2eTest, ASpecThatNamesAServerFileOrVariableIsRefusedAndSaysNothingOfTheFile) {
  const std::string admin_token = state_ + "/admin.token";
  const std::string missing = state_ + "/no-such.token";
  HttpResponse existing = submit_as(nina_, secret_job("{file: " + admin_token + "}"));
  HttpResponse absent = submit_as(nina_, secret_job("{file: " + missing + "}"));
  EXPECT_EQ(existing.status, 422) << existing.body;
  EXPECT_NE(existing.body.find("{secret: NAME}"), std::string::npos) << existing.body;
  // The same answer whether or not the file exists: no oracle of the server's files.
  json a = json::parse(existing.body), b = json::parse(absent.body);
  EXPECT_EQ(a["detail"], b["detail"]);
  EXPECT_EQ(existing.body.find(server_->admin_token()), std::string::npos);
  HttpResponse variable = submit_as(nina_, secret_job("{env: PATH}"));
  EXPECT_EQ(variable.status, 422) << variable.body;
  json jobs = get_json(url_, "/api/v1/jobs");
  EXPECT_TRUE(jobs["jobs"].empty()) << jobs.dump();
}

TEST_F(TenancyE2eTest, AUserSubmitsOnlyForItsOwnTeams) {
  const std::string job = "name: t\ncommand: 'true'\nresources: {nodes: 1, gpus_per_node: 1}\n";
  HttpResponse other = submit_as(vic_, job + "team: nlp\n");
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_NE(other.body.find("vic may not submit for team nlp; vic may submit for vision"),
            std::string::npos)
      << other.body;
  EXPECT_EQ(submit_as(vic_, job + "team: vision\n").status, 201);
  // The administrator acts for any team.
  EXPECT_EQ(call(url_, "POST", "/api/v1/jobs", job + "team: nlp\n", "application/yaml").status,
            201);
}

// A clusters file whose top class is for one team.
class PriorityCeilingE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    start_with(local_clusters_yaml(2, 2) +
               "priority_classes: {hero: {value: 1000, teams: [llm]}, production: 500}\n");
  }
};

TEST_F(PriorityCeilingE2eTest, ALowTeamCannotClaimHeroAndIsToldWhatItMayUse) {
  const std::string vic = make_token(url_, "vic", "user", {"vision"});
  const std::string lena = make_token(url_, "lena", "user", {"llm"});
  const std::string job = "name: p\ncommand: 'true'\nresources: {nodes: 1, gpus_per_node: 1}\n";
  HttpResponse hero =
      call_as(url_, vic, "POST", "/api/v1/jobs", job + "priority: hero\n", "application/yaml");
  EXPECT_EQ(hero.status, 403) << hero.body;
  EXPECT_NE(hero.body.find("classes it may use: production (500)"), std::string::npos) << hero.body;
  HttpResponse raw =
      call_as(url_, vic, "POST", "/api/v1/jobs", job + "priority: 900\n", "application/yaml");
  EXPECT_EQ(raw.status, 403) << raw.body;
  EXPECT_EQ(
      call_as(url_, lena, "POST", "/api/v1/jobs", job + "priority: hero\n", "application/yaml")
          .status,
      201);
}

// Whoever holds the port (another local user while the server is down, say) answers /healthz
// naming a file the CLI's user can read. The CLI must send it nothing: no token from that file,
// and none at all when it was given none.
TEST(ClientTokenTest, TheCliSendsNoTokenToAStandInServerThatNamesAFile) {
  TempDir dir;
  const std::string stolen = dir.path() + "/root-only.token";
  write_file(stolen, "orch_" + std::string(64, 'a') + "\n");
  std::mutex mu;
  std::vector<std::string> authorizations;
  ServerOptions options;
  options.bind = "127.0.0.1";
  options.port = 0;
  HttpServer stand_in(options, [&](const HttpRequest& request) {
    std::lock_guard<std::mutex> lock(mu);
    authorizations.push_back(request.header("authorization"));
    if (request.path == "/healthz") {
      return json_response(200, json{{"status", "ok"}, {"token_file", stolen}});
    }
    return json_response(200, json{{"jobs", json::array()}, {"next", nullptr}});
  });
  ASSERT_TRUE(stand_in.start().ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(stand_in.port());
  // A clean environment: no ORCH_TOKEN, ORCH_TOKEN_FILE or ORCH_STATE, an empty home.
  ProcessResult r = run_process({"/usr/bin/env", "-i", "HOME=" + dir.path(), "PATH=/usr/bin:/bin",
                                 ORCH_BIN_DIR "/orchestrate", "--server", url, "job", "list"},
                                milliseconds(20000));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  stand_in.stop();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_FALSE(authorizations.empty());
  for (const std::string& a : authorizations) EXPECT_EQ(a, "") << "the CLI sent a token";
}

}  // namespace
}  // namespace orch::e2e
