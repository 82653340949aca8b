// Issue 44 (item 6): a launched attempt the site still holds queued shows the site's reason for
// waiting (Kueue's message, the Kubernetes scheduler's, squeue's reason) as the job's reason,
// written only when the words change, and the reason goes back to none once it runs. The
// site's part is played with events, on a fake clock.
#include <gmock/gmock.h>

#include "scheduler/common/utf8.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kNoQuota =
    "Kueue: couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
    "flavor default, request > maximum capacity (8 > 0)";

class BrainSiteWait : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("kube")}); }

  // A job placed on kube whose launch the site confirmed: its attempt is launching.
  AttemptRow launched() {
    id = submit(make_job().on({"kube"}));
    for (const auto& a : outbox("kube")) {
      if (a.kind != ActionKind::launch) continue;
      handle(LaunchCompleted{a.id, a.token, LaunchResult{"site-" + a.token, {}}, false});
    }
    return last_attempt(id);
  }
  void queued(const AttemptRow& a, const std::string& words) {
    clock.advance_ms(5'000);  // a poll later
    AttemptObserved e{a.cluster, a.token, RunPhase::queued, std::nullopt, {}, {}, {}};
    e.waiting = words;
    handle(e);
  }
  int events_of_kind(const std::string& kind) {
    int n = 0;
    for (const auto& e : store->events_of(id).value()) n += e.kind == kind ? 1 : 0;
    return n;
  }

  JobId id = 0;
};

TEST_F(BrainSiteWait, AQueuedAttemptWithTheSitesWordsGivesThemAsTheJobsReason) {
  const AttemptRow a = launched();
  EXPECT_EQ(job(id).reason, "");
  queued(a, kNoQuota);
  EXPECT_EQ(job(id).state, JobState::placed);
  EXPECT_EQ(job(id).reason, "queued at kube: " + kNoQuota);
  EXPECT_EQ(events_of_kind("queued-at-site"), 1);
}

TEST_F(BrainSiteWait, TheSameWordsAgainWriteNothing) {
  const AttemptRow a = launched();
  queued(a, kNoQuota);
  const Millis written = job(id).updated_ms;
  for (int poll = 0; poll < 5; ++poll) queued(a, kNoQuota);
  EXPECT_EQ(job(id).updated_ms, written);  // the job's row was not written again
  EXPECT_EQ(events_of_kind("queued-at-site"), 1);
}

TEST_F(BrainSiteWait, OtherWordsReplaceTheReasonWithoutAnotherEvent) {
  const AttemptRow a = launched();
  queued(a, kNoQuota);
  queued(a, "Unschedulable: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu.");
  EXPECT_EQ(job(id).reason,
            "queued at kube: Unschedulable: 0/4 nodes are available: 4 Insufficient "
            "nvidia.com/gpu.");
  EXPECT_EQ(events_of_kind("queued-at-site"), 1);
}

TEST_F(BrainSiteWait, RunningClearsTheSitesWords) {
  const AttemptRow a = launched();
  queued(a, kNoQuota);
  observe(a, RunPhase::running);
  EXPECT_EQ(job(id).state, JobState::running);
  EXPECT_EQ(job(id).reason, "");
}

TEST_F(BrainSiteWait, StillQueuedButNoLongerSayingWhyClearsTheSitesWords) {
  const AttemptRow a = launched();
  queued(a, kNoQuota);
  queued(a, "");  // admitted, its pods pulling their image
  EXPECT_EQ(job(id).reason, "");
  EXPECT_EQ(job(id).state, JobState::placed);
}

TEST_F(BrainSiteWait, QueuedWithoutWordsWritesNothing) {
  const AttemptRow a = launched();
  const Millis before = job(id).updated_ms;
  queued(a, "");
  queued(a, "  \n ");
  EXPECT_EQ(job(id).reason, "");
  EXPECT_EQ(job(id).updated_ms, before);
  EXPECT_EQ(events_of_kind("queued-at-site"), 0);
}

TEST_F(BrainSiteWait, AHostileSitesWordsAreShownOnOneLineBoundedAndValid) {
  const AttemptRow a = launched();
  queued(a, "no quota\n\x1b[2J\xE2\x80\xAE" + std::string(4000, 'x') + "\xFF");
  const std::string reason = job(id).reason;
  EXPECT_THAT(reason, StartsWith("queued at kube: no quota [2J xxx"));
  EXPECT_LE(reason.size(), std::string("queued at kube: ").size() + kSiteWordsMax);
  EXPECT_THAT(reason, HasSubstr("..."));
  EXPECT_EQ(reason.find('\n'), std::string::npos);
  EXPECT_EQ(reason.find('\x1b'), std::string::npos);
  EXPECT_FALSE(first_invalid_utf8(reason).has_value());
}

TEST_F(BrainSiteWait, ARunningJobsReasonIsNotTouchedByQueuedWords) {
  const AttemptRow a = launched();
  observe(a, RunPhase::running);
  queued(a, kNoQuota);  // a site that says queued again after running: not a wait for a start
  EXPECT_EQ(job(id).reason, "");
  EXPECT_EQ(events_of_kind("queued-at-site"), 0);
}

}  // namespace
}  // namespace orch::testing
