// The first start cannot lock everyone out (issue 37): the server's admin token is written to
// <state>/admin.token (synced and renamed) before the row that makes it live, and a start that
// finds only server-made admin tokens without a file that holds one makes one again. Each trial
// SIGKILLs a first start at a random moment, then starts the server again on the same state:
// the token in the file must work as admin.
#include <algorithm>
#include <random>
#include <string>

#include "testkit/job_user.h"
#include "tests/integration/e2e/server_fixture.h"

namespace orch::e2e {
namespace {

constexpr int kTrials = 200;

// How long a whole first start takes here (the fastest of three), to spread the kills over it.
milliseconds first_start_duration(const std::string& config, const std::string& dir) {
  milliseconds fastest = milliseconds::max();
  for (int i = 0; i < 3; ++i) {
    const auto start = SteadyClock::now();
    std::string error;
    const std::string state = dir + "/calibrate-" + std::to_string(i);
    auto server = ServerProcess::start(config, state, dir + "/calibrate.log", error);
    EXPECT_TRUE(server) << error;
    fastest =
        std::min(fastest, std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start));
    if (server) server->kill9();
  }
  return std::max(fastest, milliseconds(20));
}

TEST(FirstStartTest, AKillAtAnyMomentOfAFirstStartLeavesAWorkingAdminToken) {
  TempDir dir;
  const std::string config = dir.path() + "/clusters.yaml";
  write_file(config, "clusters:\n  - {name: a, provider: local, nodes: 1" +
                         testkit::local_run_as_yaml() + "}\n");
  const milliseconds span = first_start_duration(config, dir.path());
  std::mt19937 random(37);
  std::uniform_int_distribution<long> moment(1, span.count());
  int killed_before_serving = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::string state = dir.path() + "/state-" + std::to_string(trial);
    const std::string log = dir.path() + "/trial.log";
    std::string error;
    // A deadline shorter than the start: ServerProcess::start SIGKILLs it there.
    auto first = ServerProcess::start(config, state, log, error, milliseconds(moment(random)));
    if (first) {
      first->kill9();
    } else {
      ++killed_before_serving;
    }
    auto again = ServerProcess::start(config, state, log, error);
    ASSERT_TRUE(again) << "trial " << trial << ": the next start failed: " << error;
    ASSERT_FALSE(again->admin_token().empty()) << "trial " << trial << ": no admin.token";
    HttpResponse who = call_as(again->url(), again->admin_token(), "GET", "/api/v1/whoami");
    ASSERT_EQ(who.status, 200) << "trial " << trial << ": " << who.body << "\n" << read_file(log);
    EXPECT_NE(who.body.find("\"role\":\"admin\""), std::string::npos) << who.body;
    again->kill9();
  }
  // The kills fell inside the start, not only after it.
  EXPECT_GT(killed_before_serving, kTrials / 3);
}

}  // namespace
}  // namespace orch::e2e
