// A failure says what failed (issue 41, item 6): an attempt that fails keeps an excerpt (the
// classifier's evidence, a hint for exit codes 126/127, the failing task's last lines) and the
// job's reason leads with it; a stop orchestrate asked for (a user's cancel, a preemption) is
// no failure: it names no failed node and leaves nothing in the node ledger.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

class BrainFailureExcerpt : public BrainFixture {
 protected:
  void SetUp() override {
    SchedulingSpec s;
    s.priority_classes = {{"hero", 1000}, {"ablation", 100}};
    start({make_cluster("alpha")}, s);
  }

  // The site reports the attempt ended with this status and these last output lines.
  void ends(const AttemptRow& a, ExitStatus status, std::vector<std::string> tail) {
    handle(AttemptObserved{a.cluster, a.token, RunPhase::exited, status, {}, {}, {}, tail});
  }

  static ExitStatus exit_code(int code, std::string node = "") {
    ExitStatus s;
    s.exit_code = code;
    s.failed_node = std::move(node);
    return s;
  }

  // A gang's task killed by the TERM a cancel sent: what the local site reports.
  static ExitStatus term_on(const std::string& node, int rank) {
    ExitStatus s;
    s.signal = 15;
    s.failed_node = node;
    s.failed_rank = rank;
    s.detail =
        "task " + std::to_string(rank) + " on " + node + " failed first; killed by signal 15";
    return s;
  }

  // A gang of 2 nodes running on alpha.
  JobId running_gang() {
    JobId id = submit(make_job().nodes(2).gpus(4));
    for (const auto& a : outbox("alpha")) {
      if (a.kind != ActionKind::launch) continue;
      handle(
          LaunchCompleted{a.id, a.token, LaunchResult{"site-1", {"alpha-n0", "alpha-n1"}}, false});
      handle(AttemptObserved{"alpha", a.token, RunPhase::running, std::nullopt, {}, {}, {}});
    }
    return id;
  }

  std::size_t ledger_entries() {
    std::size_t n = 0;
    for (const std::string node : {"alpha-n0", "alpha-n1"}) {
      n += store->node_events("alpha", node, 100).value().size();
    }
    return n;
  }
};

TEST_F(BrainFailureExcerpt, ACommandNotFoundSaysSoInTheAttemptAndTheJobsReason) {
  JobId id = submit(make_job());
  site_launches_all("alpha");
  ends(last_attempt(id), exit_code(127), {"bash: line 1: torchrun: command not found"});

  const AttemptRow a = last_attempt(id);
  EXPECT_EQ(a.cause, ExitCause::user_error);
  EXPECT_THAT(a.error_excerpt, StartsWith("torchrun: command not found\n"
                                          "command not found on alpha-n0 (exit 127): it runs "
                                          "under bash -c"));
  EXPECT_EQ(job(id).state, JobState::failed);
  EXPECT_EQ(job(id).reason,
            "user_error: torchrun: command not found; user restart budget spent (0 of 0)");
  EXPECT_THAT(store->events_of(id).value().back().message,
              HasSubstr("failed: user_error: torchrun: command not found"));
}

TEST_F(BrainFailureExcerpt, AResumedJobsReasonSaysWhatFailedToo) {
  JobId id = submit(make_job().user_restarts(2).backoff(5));
  site_launches_all("alpha");
  ends(last_attempt(id), exit_code(1),
       {"Traceback (most recent call last):", "  File \"train.py\", line 3, in <module>",
        "KeyError: 'lr'"});
  EXPECT_EQ(last_attempt(id).error_excerpt.substr(0, 14), "KeyError: 'lr'");
  EXPECT_EQ(job(id).reason, "resuming after user_error: KeyError: 'lr'; user restart 1 of 2");
}

TEST_F(BrainFailureExcerpt, AnAttemptEndedByTheBrainKeepsTheVerdictsWords) {
  JobId id = submit(make_job().hang_after_s(60).infra_restarts(0));
  site_launches_all("alpha");
  train(last_attempt(id), 1, 3, 0);
  clock.advance_ms(61'000);
  handle(Tick{});
  const AttemptRow a = attempts(id).at(0);
  EXPECT_EQ(a.cause, ExitCause::hang);
  EXPECT_THAT(a.error_excerpt, StartsWith("no progress line for 61 s"));
  EXPECT_THAT(job(id).reason, StartsWith("hang: no progress line for 61 s"));
}

TEST_F(BrainFailureExcerpt, AUsersCancelOfARunningGangIsCancelledNamesNoNodeAndBlamesNone) {
  JobId id = running_gang();
  handle(CancelJob{id});
  ends(last_attempt(id), term_on("alpha-n1", 3), {"[alpha-n1/3] Terminated"});

  const AttemptRow a = last_attempt(id);
  EXPECT_EQ(a.cause, ExitCause::cancelled);
  EXPECT_EQ(a.failed_node, "") << "FAILED ON must stay empty: nothing failed";
  EXPECT_EQ(a.error_excerpt, "");
  EXPECT_EQ(job(id).state, JobState::cancelled);
  EXPECT_EQ(job(id).reason, "cancelled by request");
  EXPECT_EQ(ledger_entries(), 0u);
  for (const auto& e : store->events_of(id).value()) {
    EXPECT_THAT(e.message, ::testing::Not(HasSubstr("first on node"))) << e.kind;
    EXPECT_THAT(e.message, ::testing::Not(HasSubstr("failed first"))) << e.kind;
  }
}

TEST_F(BrainFailureExcerpt, ATaskThatVanishedDuringACancelIsNoNodeFailure) {
  JobId id = running_gang();
  handle(CancelJob{id});
  ExitStatus lost = term_on("alpha-n0", 0);
  lost.node_lost = true;
  lost.cause = ExitCause::node_lost;
  lost.signal = 9;
  ends(last_attempt(id), lost, {});

  EXPECT_EQ(last_attempt(id).cause, ExitCause::cancelled);
  EXPECT_EQ(last_attempt(id).failed_node, "");
  EXPECT_EQ(ledger_entries(), 0u) << "no node-failure entry, no lost copies";
}

TEST_F(BrainFailureExcerpt, APreemptionTheBrainAskedForNamesNoNodeAndBlamesNone) {
  JobId victim = submit(make_job().gpus(4).priority_class("ablation").preempt_grace_s(30));
  site_launches_all("alpha");
  JobId other = submit(make_job().gpus(4).priority_class("ablation"));
  site_launches_all("alpha");
  train(last_attempt(victim), 1, 4, 0);  // fewer steps at risk than the other: the victim
  train(last_attempt(other), 1, 20, 0);
  JobId hero = submit(make_job().gpus(4).priority_class("hero"));
  clock.advance_ms(31'000);
  handle(Tick{});
  AttemptRow stopped = attempts(victim).at(0);
  ASSERT_EQ(stopped.preempt_for, hero);
  ASSERT_EQ(stopped.cause, ExitCause::priority_preempted);

  ExitStatus term;
  term.signal = 15;
  term.failed_node = "alpha-n0";
  ends(stopped, term, {"Terminated"});
  stopped = attempts(victim).at(0);
  EXPECT_EQ(stopped.cause, ExitCause::priority_preempted);
  EXPECT_EQ(stopped.failed_node, "");
  EXPECT_EQ(stopped.error_excerpt, "");
  EXPECT_EQ(ledger_entries(), 0u);
  EXPECT_EQ(job(victim).infra_restarts, 0);
}

TEST_F(BrainFailureExcerpt, AMoveOffALongQueueNamesNoNodeAndBlamesNone) {
  start({make_cluster("alpha"), make_cluster("beta")});
  JobId id = submit(make_job().gpus(4).prefer({"alpha"}).max_queue_s(20));
  const AttemptRow queued = last_attempt(id);
  for (const auto& o : outbox("alpha")) {
    if (o.kind != ActionKind::launch || o.token != queued.token) continue;
    handle(LaunchCompleted{o.id, o.token, LaunchResult{"site-1", {"alpha-n0"}}, false});
  }
  observe(queued, RunPhase::queued);
  clock.advance_ms(20'000);
  handle(Tick{});
  ASSERT_EQ(attempts(id).at(0).cause, ExitCause::queue_timeout);
  // The site drops it from its queue as asked: what it says then changes nothing.
  ExitStatus term;
  term.signal = 15;
  term.failed_node = "alpha-n0";
  ends(attempts(id).at(0), term, {});
  const AttemptRow moved = attempts(id).at(0);
  EXPECT_EQ(moved.cause, ExitCause::queue_timeout);
  EXPECT_EQ(moved.failed_node, "");
  EXPECT_EQ(moved.error_excerpt, "");
  EXPECT_EQ(ledger_entries(), 0u);
}

TEST_F(BrainFailureExcerpt, ASucceededAttemptKeepsNoExcerpt) {
  JobId id = submit(make_job());
  site_launches_all("alpha");
  ends(last_attempt(id), exit_code(0), {"NCCL WARN a retried connection", "done"});
  EXPECT_EQ(last_attempt(id).error_excerpt, "");
  EXPECT_EQ(job(id).state, JobState::succeeded);
}

}  // namespace
}  // namespace orch::testing
