// `orchestrate __complete KIND` (issue 42): the server's names for the completion scripts,
// cached a few seconds in the user's cache directory, and nothing (quickly) when no server
// answers. Against a real HttpServer over the fake backend (jobs 1 and 2, cluster alpha).

#include "cli/complete_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "tests/unit/web/cli_server_fixture.h"

namespace orch {
namespace {

class CompleteCommand : public CliServerTest {
 protected:
  void SetUp() override {
    CliServerTest::SetUp();
    cache_ = ::testing::TempDir() + "/complete-cache-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(cache_);
    ::setenv("XDG_CACHE_HOME", cache_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("XDG_CACHE_HOME");
    std::filesystem::remove_all(cache_);
    CliServerTest::TearDown();
  }
  std::string words(const std::string& kind, long long now_ms) {
    std::ostringstream o;
    EXPECT_EQ(run_complete(options, kind, now_ms, o), kExitOk);
    return o.str();
  }
  std::string cache_;
};

TEST_F(CompleteCommand, JobIdsAndClusterNamesComeFromTheServer) {
  EXPECT_EQ(words("jobs", 1000), "1\n2\n");
  EXPECT_EQ(words("clusters", 1000), "alpha\nbeta-long-name\n");
}

TEST_F(CompleteCommand, StatesNeedNoServer) {
  options.server = "http://127.0.0.1:9";
  EXPECT_EQ(words("states", 0),
            "pending\nplaced\nrunning\nresuming\nsucceeded\nfailed\ncancelled\nstaging\n");
}

TEST_F(CompleteCommand, AnAnswerIsCachedForAFewSecondsForTheUserAlone) {
  EXPECT_EQ(words("jobs", 10000), "1\n2\n");
  const std::string file = cache_ + "/orchestrate/complete-jobs.json";
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((cache_ + "/orchestrate").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  backend.fail = make_error(ErrorKind::io, "down");
  EXPECT_EQ(words("jobs", 10000 + kCompleteCacheTtlMs - 1), "1\n2\n");  // no call made
  EXPECT_EQ(words("jobs", 10000 + kCompleteCacheTtlMs), "");            // stale: asked again
  // Another server's cache is not this one's.
  backend.fail.reset();
  EXPECT_EQ(words("jobs", 50000), "1\n2\n");
  options.server = "http://127.0.0.1:9";
  EXPECT_EQ(words("jobs", 50001), "");
}

TEST_F(CompleteCommand, NoServerMeansNoWordsSoonAndNoError) {
  options.server = "http://10.255.255.1:9";  // unroutable: a connect that would hang
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(words("clusters", 0), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(kCompleteTimeoutMs + 1500));
}

TEST_F(CompleteCommand, AnUnknownKindIsAUsageError) {
  std::ostringstream o;
  EXPECT_EQ(run_complete(options, "users", 0, o), kExitUsage);
  EXPECT_EQ(cli({"__complete", "users"}), kExitUsage);
}

}  // namespace
}  // namespace orch
