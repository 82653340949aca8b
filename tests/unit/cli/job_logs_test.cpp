// `orchestrate job logs` and `job submit --follow` (issue 41, item 5) in-process against a real
// HttpServer over a scripted run of job 1: a 2 x 2 gang whose first attempt (alpha) ends and
// whose second (beta) succeeds, advanced one stage each time the job is asked for.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "cli/client_cli.h"
#include "cli/job_logs.h"
#include "tests/unit/web/cli_server_fixture.h"
#include "tests/unit/web/fake_backend.h"

namespace orch {
namespace {

using nlohmann::json;

// Stage 1: attempt 1 running, its last line not ended yet. Stage 2: attempt 1 ended (the rest
// of that line came just before), attempt 2 running. Stage 3 on: the job succeeded (or
// `final_state`), attempt 2's last line written.
class ScriptedRun : public testing::FakeBackend {
 public:
  std::string final_state = "succeeded";
  int stage = 0;

  Result<JsonText> get_job(std::int64_t id) override {
    std::lock_guard lock(mu_);
    if (id != 1) return make_error(ErrorKind::not_found, "no job with id " + std::to_string(id));
    stage = std::min(stage + 1, 3);
    if (stage == 1) {
      logs_[1] =
          "[a-n0/0] one\n[a-n0/1] @orchestrate {\"event\":\"progress\",\"step\":1}\n[a-n0/1] half";
    }
    if (stage == 2) {
      logs_[1] += " and the rest\n";
      logs_[2] = "[b-n0/0] two\n";
    }
    if (stage == 3 && logs_[2].find("last") == std::string::npos) logs_[2] += "[b-n1/3] last\n";
    const std::string state = stage < 3 ? "running" : final_state;
    return JsonText{json{{"id", 1},
                         {"state", state},
                         {"reason", state == "failed" ? "user_error: exit code 1" : ""},
                         {"nodes", 2},
                         {"attempts", stage < 2 ? 1 : 2},
                         {"spec", {{"resources", {{"nodes", 2}, {"tasks_per_node", 2}}}}}}
                        .dump()};
  }
  Result<json> job_attempts(std::int64_t) override {
    std::lock_guard lock(mu_);
    return json{
        {"attempts", {{{"no", 1}, {"cluster", "alpha"}}, {{"no", 2}, {"cluster", "beta"}}}}};
  }
  Result<json> job_events(std::int64_t) override {
    std::lock_guard lock(mu_);
    json events = {{{"at_ms", 1700000000000}, {"kind", "submitted"}, {"message", "submitted"}}};
    if (stage >= 2)
      events.push_back({{"at_ms", 1700000001000}, {"kind", "resuming"}, {"message", "on beta"}});
    return json{{"events", events}};
  }
  Result<std::string> job_logs(std::int64_t, const LogRequest& request) override {
    std::lock_guard lock(mu_);
    const std::string& log = logs_[request.attempt_no.value_or(stage < 2 ? 1 : 2)];
    // At most 8 bytes an answer, so lines come cut across reads.
    if (request.offset >= log.size()) return std::string();
    return log.substr(request.offset, 8);
  }
  Result<json> submit_job(const std::string&, const std::string&, const Submitter&) override {
    std::lock_guard lock(mu_);
    return json{{"id", 1}, {"name", "gang"}, {"state", "pending"}};
  }

 private:
  std::map<int, std::string> logs_;
};

class JobLogsTest : public CliServerTestOn<ScriptedRun> {
 protected:
  void SetUp() override {
    CliServerTestOn<ScriptedRun>::SetUp();
    options.poll_ms = 1;
  }
  // `job logs 1` (the CLI's flags are tried through cli(); it polls every second, these every
  // millisecond).
  int logs(bool follow, LogFilterOptions filter = {}) {
    LogsRequest request;
    request.id = 1;
    request.follow = follow;
    request.filter = std::move(filter);
    return run_job_logs(options, request, out, err);
  }
  // `orchestrate --server URL ARGS...` through CLI11.
  int cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"--server", options.server});
    return CliServerHarness::cli(std::move(args));
  }
  static constexpr std::uint64_t kLimit = 1 << 20;
};

// Every line once, the first attempt's to its end (the rest of its last line came after the
// second attempt began) before the second's, each attempt announced; protocol lines hidden.
TEST_F(JobLogsTest, FollowGoesOnIntoTheNextAttemptAndEndsWithTheJob) {
  ASSERT_EQ(logs(true), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "[a-n0/0] one\n[a-n0/1] half and the rest\n[b-n0/0] two\n[b-n1/3] last\n");
  EXPECT_EQ(err.str(), "--- attempt 1 on alpha ---\n--- attempt 2 on beta ---\n");
}

// (Checking --rank against the job moves the script on a stage: the follow starts at attempt 2.)
TEST_F(JobLogsTest, FollowKeepsOneRanksOrOneNodesWholeLines) {
  LogFilterOptions rank;
  rank.rank = 3;
  ASSERT_EQ(logs(true, rank), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "[b-n1/3] last\n");
  out.str("");
  backend.stage = 0;
  LogFilterOptions node;
  node.node = "b-n0";
  ASSERT_EQ(logs(true, node), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "[b-n0/0] two\n");
}

// Without --follow, the whole log so far (in many reads), and a partial last line at the end.
TEST_F(JobLogsTest, AReadThatDoesNotFollowPrintsEverythingSoFar) {
  backend.stage = 0;
  (void)backend.get_job(1);  // stage 1
  ASSERT_EQ(cli({"job", "logs", "1"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "[a-n0/0] one\n[a-n0/1] half\n");
  out.str("");
  ASSERT_EQ(cli({"job", "logs", "1", "--raw"}), kExitOk) << err.str();
  EXPECT_EQ(
      out.str(),
      "[a-n0/0] one\n[a-n0/1] @orchestrate {\"event\":\"progress\",\"step\":1}\n[a-n0/1] half");
}

TEST_F(JobLogsTest, ABadRankOrFlagsThatDoNotGoTogetherAreUsageErrors) {
  EXPECT_EQ(cli({"job", "logs", "1", "--rank", "4"}), kExitUsage);
  EXPECT_NE(err.str().find("--rank 4: job 1 has 4 tasks, ranks 0 to 3"), std::string::npos)
      << err.str();
  err.str("");
  EXPECT_EQ(cli({"job", "logs", "1", "--rank", "-1"}), kExitUsage);
  EXPECT_NE(err.str().find("a task's rank: 0 or more"), std::string::npos) << err.str();
  err.str("");
  EXPECT_EQ(cli({"job", "logs", "1", "--rank", "x"}), kExitUsage);
  EXPECT_NE(err.str().find("got 'x'"), std::string::npos) << err.str();
  EXPECT_EQ(cli({"job", "logs", "1", "--raw", "--rank", "1"}), kExitUsage);
  EXPECT_EQ(cli({"job", "logs", "1", "--raw", "--node", "a-n0"}), kExitUsage);
}

// Like `sky launch`: the events on err and the log on out as they come, from the first
// attempt, until the job ends; the exit code says how it ended.
TEST_F(JobLogsTest, SubmitFollowStreamsEventsAndLogAndExitsWithTheOutcome) {
  const std::string path = ::testing::TempDir() + "/job_logs_test_gang.yaml";
  std::ofstream(path) << "name: gang\n";
  ASSERT_EQ(run_job_submit_follow(options, path, out, err, kLimit), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "[a-n0/0] one\n[a-n0/1] half and the rest\n[b-n0/0] two\n[b-n1/3] last\n");
  const std::string e = err.str();
  EXPECT_EQ(e.find("submitted job 1;"), 0u) << e;
  EXPECT_NE(e.find("] submitted: submitted\n"), std::string::npos) << e;
  EXPECT_NE(e.find("] resuming: on beta\n"), std::string::npos) << e;
  EXPECT_EQ(e.find("resuming"), e.rfind("resuming")) << "each event once: " << e;
  EXPECT_LT(e.find("--- attempt 1 on alpha ---"), e.find("resuming")) << e;
  EXPECT_NE(e.find("job 1 succeeded\n"), std::string::npos) << e;

  backend.stage = 0;
  backend.final_state = "failed";
  out.str("");
  err.str("");
  // Through the command line (which polls every second: this takes two).
  EXPECT_EQ(cli({"job", "submit", "-f", path}), kExitServerError);
  EXPECT_NE(err.str().find("job 1 failed: user_error: exit code 1\n"), std::string::npos)
      << err.str();
}

// Without --follow: the id alone on out (scripts capture it), the next step on err.
TEST_F(JobLogsTest, SubmitNamesTheNextStep) {
  const std::string path = ::testing::TempDir() + "/job_logs_test_gang.yaml";
  std::ofstream(path) << "name: gang\n";
  ASSERT_EQ(cli({"job", "submit", path}), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "1\n");
  EXPECT_EQ(err.str(), "submitted job 1; follow it with: orchestrate job logs 1 --follow\n");
  out.str("");
  ASSERT_EQ(cli({"-o", "json", "job", "submit", path}), kExitOk) << err.str();
  EXPECT_EQ(json::parse(out.str())["id"], 1);
}

}  // namespace
}  // namespace orch
