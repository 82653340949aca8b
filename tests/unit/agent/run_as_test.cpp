// `orchestrate-agent run --run-as USER` end to end: the job runs as the user, for good (ids,
// capabilities, no_new_privs, HOME/USER/LOGNAME), while the agent stays root and records the
// exit; an agent that cannot take the user on runs nothing. Most of it needs root: skipped
// otherwise.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/agent/agent_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class RunAsTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const passwd* pw = getpwnam("nobody");
    if (pw == nullptr) GTEST_SKIP() << "this machine has no user nobody";
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
  }
  std::string events() const { return slurp(dir_ + "/events.jsonl"); }
  int run_as(const std::string& user, const std::string& script) {
    return agent("run --events " + dir_ + "/events.jsonl --run-as " + user + " -- sh -c '" +
                 script + "'");
  }
  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

TEST_F(RunAsTest, TheJobRunsAsTheUserForGood) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  EXPECT_EQ(run_as("nobody",
                   "id -u; id -g; id -G; echo $HOME $USER $LOGNAME; "
                   "grep -E \"^(Uid|Gid|CapEff|CapPrm|NoNewPrivs):\" /proc/self/status"),
            0)
      << err();
  const std::string u = std::to_string(uid_), g = std::to_string(gid_);
  EXPECT_THAT(out(), HasSubstr(u + "\n" + g + "\n" + g + "\n/nonexistent nobody nobody\n"));
  EXPECT_THAT(out(), HasSubstr("Uid:\t" + u + "\t" + u + "\t" + u + "\t" + u + "\n"));
  EXPECT_THAT(out(), HasSubstr("Gid:\t" + g + "\t" + g + "\t" + g + "\t" + g + "\n"));
  EXPECT_THAT(out(), HasSubstr("CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"));
  EXPECT_THAT(out(), HasSubstr("NoNewPrivs:\t1\n"));
  EXPECT_THAT(events(), HasSubstr("\"event\":\"exit\",\"exit_code\":0"));
}

TEST_F(RunAsTest, TheJobCannotSignalOrReadTheAgent) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  // $PPID is the agent: root, so neither a signal nor its environment reaches it.
  EXPECT_EQ(run_as("nobody",
                   "kill -9 $PPID 2>/dev/null; echo kill=$?; "
                   "cat /proc/$PPID/environ >/dev/null 2>&1; echo environ=$?; exit 3"),
            3)
      << err();
  EXPECT_THAT(out(), HasSubstr("kill=1\nenviron=1\n"));
  // The agent lived to record how the job ended.
  EXPECT_THAT(events(), HasSubstr("\"event\":\"exit\",\"exit_code\":3"));
}

TEST_F(RunAsTest, AUserItCannotTakeOnRunsNothing) {
  const std::string marker = dir_ + "/ran";
  for (const char* user : {"no-such-user-xyz", "root"}) {
    SCOPED_TRACE(user);
    EXPECT_EQ(run_as(user, "touch " + marker), 2);
    EXPECT_FALSE(std::filesystem::exists(marker));
    EXPECT_EQ(events(), "");  // not even a start record
  }
  if (geteuid() != 0) {
    EXPECT_THAT(err(), HasSubstr("the agent must run as root"));
  } else {
    EXPECT_THAT(err(), HasSubstr("--run-as root: that user is root"));
  }
}

TEST_F(RunAsTest, AnAgentThatIsNotRootRunsNothing) {
  if (geteuid() != 0) {
    EXPECT_EQ(run_as("nobody", "true"), 2);
    EXPECT_THAT(err(), HasSubstr("the agent must run as root"));
    return;
  }
  // Started as nobody: it cannot switch users, and says so instead of running the job as itself.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int err_fd = open((dir_ + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err_fd, 2);
    if (setgid(gid_) != 0 || setuid(uid_) != 0) _exit(100);
    execl(kAgentPath, kAgentPath, "run", "--events", "/dev/null", "--run-as", "nobody", "--",
          "true", static_cast<char*>(nullptr));
    _exit(101);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_THAT(err(), HasSubstr("the agent must run as root to start the job as another user"));
}

TEST_F(RunAsTest, AnEmptyUserIsBadUsage) {
  EXPECT_EQ(agent("run --events " + dir_ + "/e --run-as '' -- true"), 2);
  EXPECT_THAT(err(), HasSubstr("--run-as wants a user name"));
}

}  // namespace
}  // namespace orch::testing
