// Jobs never run as the server (issue 37; docs/security.md, "The host"), against the real
// binary. With the server running as root and its local sites' `run_as` set, a job that tries to
// read <state>/admin.token and the server's environment from /proc, signal its agent, or touch
// its run's control files is refused each time, runs as the run_as user, and sees neither
// secret. A root server refuses a local site without run_as, and a server that is not root
// refuses one with it. A job calls the CLI with an API token its spec gave it as ORCH_TOKEN; the
// launch token under the old name is not sent. The root-only tests skip elsewhere.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kServerSecret = "server-env-secret-5f1e2d";

class RunAsE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the server switches users only as root";
    // Something of the server's own environment that no job may learn.
    setenv("ORCH_TEST_SERVER_SECRET", kServerSecret, 1);
    E2eTest::SetUp();
    unsetenv("ORCH_TEST_SERVER_SECRET");
  }
};

std::string logs(const std::string& url, std::int64_t id) {
  return call(url, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs").body;
}

TEST_F(RunAsE2eTest, AJobCannotReachTheServersTokenEnvironmentAgentOrControlFiles) {
  const std::string pid = std::to_string(server_->pid());
  // Each try says whether it worked; the two reads also print cat's own words.
  const std::string job =
      "name: intruder\n"
      "command: |\n"
      "  try() { name=$1; shift; if \"$@\"; then echo $name=ok; else echo $name=denied; fi; }\n"
      "  id -u\n"
      "  try token cat " +
      state_ +
      "/admin.token\n"
      "  try environ cat /proc/" +
      pid +
      "/environ\n"
      "  try list_state ls " +
      state_ +
      "\n"
      "  try kill_agent kill -9 $PPID\n"
      "  try write_events sh -c 'echo junk >> ../events.jsonl'\n"
      "  try remove_lock rm ../agent.lock\n"
      "  try read_request cat ../request.json\n"
      "  true\n"
      "resources: {nodes: 1, gpus_per_node: 1}\n";
  const std::int64_t id = submit(job);
  ASSERT_GT(id, 0);
  json done = wait_final(id);
  ASSERT_EQ(done.value("state", ""), "succeeded") << describe_job(url_, id);
  const std::string out = logs(url_, id);

  const passwd* user = getpwnam(testkit::job_user().c_str());
  ASSERT_NE(user, nullptr);
  EXPECT_THAT(out, HasSubstr(std::to_string(user->pw_uid) + "\n")) << out;
  EXPECT_THAT(out, HasSubstr(state_ + "/admin.token: Permission denied\n")) << out;
  EXPECT_THAT(out, HasSubstr("/proc/" + pid + "/environ: Permission denied\n")) << out;
  for (const char* name : {"token", "environ", "list_state", "kill_agent", "write_events",
                           "remove_lock", "read_request"}) {
    EXPECT_THAT(out, HasSubstr(std::string(name) + "=denied\n")) << out;
  }
  EXPECT_THAT(out, Not(HasSubstr("=ok\n"))) << out;
  EXPECT_THAT(out, Not(HasSubstr(server_->admin_token())));
  EXPECT_THAT(out, Not(HasSubstr(kServerSecret)));
  ASSERT_FALSE(server_->admin_token().empty());
}

TEST(RunAsServeTest, ARootServerRefusesALocalSiteWithoutRunAs) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  TempDir dir;
  write_file(dir.path() + "/c.yaml", "clusters:\n  - {name: a, provider: local, nodes: 1}\n");
  ProcessResult r =
      run_process({ORCH_BIN_DIR "/orchestrate", "serve", "--config", dir.path() + "/c.yaml",
                   "--state", dir.path() + "/s", "--port", "0"},
                  milliseconds(20000));
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("cluster \"a\": this server runs as root"));
  EXPECT_THAT(r.output, HasSubstr("set `local: {run_as: orchestrate-job}`"));
  EXPECT_THAT(r.output, HasSubstr("`make deps` creates that user"));

  write_file(dir.path() + "/c.yaml",
             "clusters:\n  - {name: a, provider: local, local: {run_as: no-such-user-xyz}}\n");
  r = run_process({ORCH_BIN_DIR "/orchestrate", "serve", "--config", dir.path() + "/c.yaml",
                   "--state", dir.path() + "/s", "--port", "0"},
                  milliseconds(20000));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("local.run_as no-such-user-xyz: no such user on this machine"));
}

// `orchestrate serve ARGS...` as the user nobody; its exit status and what it printed.
ProcessResult serve_as_nobody(const passwd& nobody, const std::vector<std::string>& args,
                              const std::string& log) {
  std::vector<std::string> argv = {ORCH_BIN_DIR "/orchestrate", "serve"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (std::string& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  ProcessResult out;
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    if (setgroups(0, nullptr) != 0 || setgid(nobody.pw_gid) != 0 || setuid(nobody.pw_uid) != 0) {
      _exit(100);
    }
    execv(c_argv[0], c_argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    out.exit_code = WEXITSTATUS(status);
  }
  out.output = read_file(log);
  return out;
}

TEST(RunAsServeTest, AServerThatIsNotRootRefusesRunAs) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to start the server as another user)";
  const passwd* nobody = getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "this machine has no user nobody";
  TempDir dir;  // searchable by others: the server as nobody reads its clusters file in it
  const std::string state = dir.path() + "/s";
  ASSERT_EQ(mkdir(state.c_str(), 0700), 0);
  ASSERT_EQ(chown(state.c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  write_file(dir.path() + "/c.yaml",
             "clusters:\n  - {name: a, provider: local, local: {run_as: nobody}}\n");
  ASSERT_EQ(chmod((dir.path() + "/c.yaml").c_str(), 0644), 0);
  ProcessResult r = serve_as_nobody(
      *nobody, {"--config", dir.path() + "/c.yaml", "--state", state, "--port", "0"},
      dir.path() + "/serve.log");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cluster \"a\": local.run_as nobody: this server runs as uid " +
                                  std::to_string(nobody->pw_uid) +
                                  ", not root, so it cannot start jobs as another user"));
}

// The launch contract's token under its new name, and the CLI in a job: the launch token under
// the old name is not an API token (a warning, nothing sent), an API token the spec gives as
// ORCH_TOKEN is. As root the job runs as the run_as user; otherwise as the test's.
TEST_F(E2eTest, AJobCallsTheCliWithTheApiTokenItsSpecGives) {
  HttpResponse made = call(url_, "POST", "/api/v1/tokens", R"({"name": "bot", "role": "viewer"})");
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string bot = json::parse(made.body)["token"].get<std::string>();
  const std::string cli = testkit::job_bin_dir() + "/orchestrate --server " + url_ + " job list";
  const std::string script =
      "command: |\n"
      "  test -n \"$ORCH_LAUNCH_TOKEN\" && echo has_launch_token\n"
      "  " +
      cli +
      "; echo cli=$?\n"
      "resources: {nodes: 1, gpus_per_node: 1}\n";

  const std::int64_t legacy = submit("name: legacy\n" + script);
  ASSERT_GT(legacy, 0);
  wait_final(legacy);
  const std::string legacy_out = logs(url_, legacy);
  EXPECT_THAT(legacy_out, HasSubstr("has_launch_token\n"));
  EXPECT_THAT(legacy_out, HasSubstr("ORCH_TOKEN holds this job's launch token"));
  EXPECT_THAT(legacy_out, Not(HasSubstr("cli=0\n")));

  const std::int64_t given = submit("name: given\nenv: {ORCH_TOKEN: " + bot + "}\n" + script);
  ASSERT_GT(given, 0);
  json done = wait_final(given);
  const std::string given_out = logs(url_, given);
  EXPECT_THAT(given_out, HasSubstr("has_launch_token\n"));
  EXPECT_THAT(given_out, HasSubstr("legacy")) << given_out;  // the job list, as bot sees it
  EXPECT_THAT(given_out, HasSubstr("cli=0\n")) << given_out;
  EXPECT_THAT(given_out, Not(HasSubstr("launch token")));
}

}  // namespace
}  // namespace orch::e2e
