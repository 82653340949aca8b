// LocalSite cancel, outage and restart behaviour against real agent processes.

#include <gmock/gmock.h>
#include <sys/wait.h>

#include <algorithm>

#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(LocalSiteTest, CancelSendsSigtermTheJobCanCatch) {
  // The trap writes a marker (as a job would save a checkpoint), stops its sleep and exits 143.
  launch_ok(request("run-cancel",
                    "trap 'echo term > \"$ORCH_RUN_DIR/got_term\"; kill $! 2>/dev/null; exit 143'"
                    " TERM; echo ready; sleep 30 & wait"));
  ASSERT_TRUE(wait_output("run-cancel", "ready"));
  auto c = site_->cancel("run-cancel");
  ASSERT_TRUE(c.ok()) << c.error().message;
  RunObservation last = wait_exited("run-cancel");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 143);
  EXPECT_EQ(slurp(run_dir("run-cancel") + "/work/got_term"), "term\n");
  // Cancelling what has exited, or what was never launched, is fine.
  EXPECT_TRUE(site_->cancel("run-cancel").ok());
  EXPECT_TRUE(site_->cancel("never-launched").ok());
}

TEST_F(LocalSiteTest, ASaveSignalReachesTheJobAndStopsNothing) {
  // As a preempted job would: on USR1 it saves (a marker) and goes on; TERM then ends it.
  launch_ok(request("run-save",
                    "trap 'echo saved >> \"$ORCH_RUN_DIR/saves\"; echo saved' USR1; "
                    "trap 'exit 143' TERM; echo ready; while :; do sleep 0.05; done"));
  ASSERT_TRUE(wait_output("run-save", "ready"));
  auto s = site_->signal("run-save", "USR1");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(wait_output("run-save", "saved"));
  EXPECT_EQ(site_->observe("run-save", 0)->phase, RunPhase::running) << "a save request only";
  EXPECT_EQ(slurp(run_dir("run-save") + "/work/saves"), "saved\n");
  EXPECT_EQ(site_->signal("run-save", "KILL").error().kind, ErrorKind::invalid);
  EXPECT_TRUE(site_->signal("never-launched", "USR1").ok());
  ASSERT_TRUE(site_->cancel("run-save").ok());
  EXPECT_EQ(wait_exited("run-save").exit->exit_code, 143);
}

TEST_F(LocalSiteTest, RepeatedCancelAfterGraceKillsTheGroup) {
  site_ = make_site(2, /*grace_ms=*/100);
  launch_ok(request("run-stubborn", "trap '' TERM; echo ready; while :; do sleep 0.05; done"));
  ASSERT_TRUE(wait_output("run-stubborn", "ready"));
  ASSERT_TRUE(site_->cancel("run-stubborn").ok());
  // The job ignores SIGTERM; within the grace a second cancel does not escalate.
  ASSERT_TRUE(site_->cancel("run-stubborn").ok());
  auto obs = site_->observe("run-stubborn", 0);
  ASSERT_TRUE(obs.ok());
  EXPECT_EQ(obs->phase, RunPhase::running);
  RunObservation last;
  ASSERT_TRUE(eventually([&] {
    EXPECT_TRUE(site_->cancel("run-stubborn").ok());
    auto o = site_->observe("run-stubborn", 0);
    if (!o.ok() || o->phase != RunPhase::exited) return false;
    last = *o;
    return true;
  }));
  EXPECT_EQ(last.exit->signal, SIGKILL);
}

TEST_F(LocalSiteTest, OutageKillsWorkAndAnswersUnreachableUntilUp) {
  launch_ok(request("run-outage", "echo ready; sleep 30"));
  ASSERT_TRUE(wait_output("run-outage", "ready"));
  ASSERT_TRUE(site_->set_outage(true).ok());
  ASSERT_TRUE(site_->set_outage(true).ok());  // idempotent while down

  auto obs = site_->observe("run-outage", 0);
  ASSERT_FALSE(obs.ok());
  EXPECT_EQ(obs.error().kind, ErrorKind::unreachable);
  EXPECT_EQ(obs.error().message, "site loc is not answering (simulated outage)");
  auto launched = site_->launch(request("run-during", "true"));
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.error().kind, ErrorKind::unreachable);
  EXPECT_EQ(site_->inventory().error().kind, ErrorKind::unreachable);
  EXPECT_EQ(site_->find("run-outage").error().kind, ErrorKind::unreachable);
  EXPECT_EQ(site_->cancel("run-outage").error().kind, ErrorKind::unreachable);
  EXPECT_EQ(site_->read_output("run-outage", 0, 10).error().kind, ErrorKind::unreachable);

  ASSERT_TRUE(site_->set_outage(false).ok());
  RunObservation last = wait_exited("run-outage");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->signal, SIGKILL);
  EXPECT_THAT(last.exit->detail, HasSubstr("vanished"));
  EXPECT_TRUE(site_->inventory().ok());
  launch_ok(request("run-after", "true"));
  EXPECT_EQ(wait_exited("run-after").exit->exit_code, 0);
}

TEST_F(LocalSiteTest, NewSiteObjectOnSameRootSeesRunsOfTheOldOne) {
  LaunchResult launched = launch_ok(
      request("run-restart", "echo waiting; while [ ! -f go ]; do sleep 0.02; done; echo went"));
  ASSERT_TRUE(wait_output("run-restart", "waiting"));
  site_ = make_site();  // the old object is gone, as after a server restart

  auto found = site_->find("run-restart");
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->site_job_id, launched.site_job_id);
  auto obs = site_->observe("run-restart", 0);
  ASSERT_TRUE(obs.ok());
  EXPECT_EQ(obs->phase, RunPhase::running);
  auto again = site_->launch(request("run-restart", "echo second"));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->adopted) << "the new site object adopts the old one's run";
  EXPECT_EQ(again->site_job_id, launched.site_job_id);

  std::ofstream(run_dir("run-restart") + "/work/go") << "go\n";
  std::vector<std::string> lines;
  RunObservation last = wait_exited("run-restart", &lines);
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 0);
  EXPECT_EQ(lines, (std::vector<std::string>{"waiting", "went"}));
}

TEST_F(LocalSiteTest, RunSurvivesTheServerBeingKilled) {
  // A child process plays the server: it launches, then dies by SIGKILL without cleaning up.
  pid_t server = fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    auto r = make_site()->launch(
        request("run-orphan", "echo waiting; while [ ! -f go ]; do sleep 0.02; done"));
    if (!r.ok()) _exit(1);
    raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(waitpid(server, &status, 0), server);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the launching process failed";
  auto found = site_->find("run-orphan");
  ASSERT_TRUE(found.ok() && found->has_value());
  pgids_.push_back(std::stoi((*found)->site_job_id));
  auto obs = site_->observe("run-orphan", 0);
  ASSERT_TRUE(obs.ok());
  EXPECT_EQ(obs->phase, RunPhase::running);
  std::ofstream(run_dir("run-orphan") + "/work/go") << "go\n";
  EXPECT_EQ(wait_exited("run-orphan").exit->exit_code, 0);
}

TEST_F(LocalSiteTest, ConcurrentCallsFromTwoThreadsAgree) {
  auto r = request("run-threads", "sleep 0.3");
  std::vector<std::string> ids(4);
  std::vector<int> adopted(4, -1);  // -1: the launch failed
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto result = site_->launch(r);
      if (result.ok()) {
        ids[i] = result->site_job_id;
        adopted[i] = result->adopted ? 1 : 0;
      }
      for (int k = 0; k < 20; ++k) (void)site_->observe("run-threads", 0);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_FALSE(ids[0].empty());
  pgids_.push_back(std::stoi(ids[0]));
  for (const std::string& id : ids) EXPECT_EQ(id, ids[0]);
  EXPECT_EQ(std::count(adopted.begin(), adopted.end(), 0), 1) << "exactly one launch started it";
  EXPECT_EQ(std::count(adopted.begin(), adopted.end(), 1), 3) << "the others adopted it";
  EXPECT_EQ(wait_exited("run-threads").exit->exit_code, 0);
}

}  // namespace
}  // namespace orch::testing
