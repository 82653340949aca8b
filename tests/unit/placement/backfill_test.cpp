// Backfill (issue 18): where GPUs are held for a waiting job that fits nowhere yet, when it is
// expected to start there, and which later jobs the `held` filter lets use them.
#include <gtest/gtest.h>

#include "scheduler/placement/backfill.h"
#include "tests/harness/builders.h"

namespace orch::testing {
namespace {

constexpr Millis kNow = 1'000'000;
constexpr Millis kHour = 3'600'000;

class BackfillTest : public ::testing::Test {
 protected:
  // alpha and beta: 2 nodes x 4 GPUs each; alpha has 4 GPUs in use, beta 8.
  ClusterSpec alpha = make_cluster("alpha");
  ClusterSpec beta = make_cluster("beta");
  std::vector<ClusterView> views{{&alpha, SiteHealth::healthy, 4, {}},
                                 {&beta, SiteHealth::healthy, 8, {}}};
  PlacementPipeline pipeline = PlacementPipeline::standard();
  JobSpec big = make_job().nodes(2).gpus(4);  // 8 GPUs: fits nowhere now

  PlacementRequest request(const JobSpec& job, std::int64_t id) const {
    PlacementRequest r{&job};
    r.job_id = id;
    r.now_ms = kNow;
    if (auto limit = job.time_limit_ms()) r.ends_ms = kNow + *limit;
    return r;
  }
  static AttemptEnd ends(const std::string& cluster, int gpus, std::optional<Millis> at) {
    return {cluster, gpus, at};
  }
};

TEST_F(BackfillTest, HoldsWhereTheJobStartsSoonestByTheTimeLimitsOfWhatRuns) {
  auto plan = plan_hold(pipeline, request(big, 7), views,
                        {ends("alpha", 4, kNow + 3 * kHour), ends("beta", 4, kNow + kHour),
                         ends("beta", 4, kNow + 2 * kHour)});
  ASSERT_TRUE(plan);
  // alpha frees its 4 in 3 h; beta its 8 in 2 h (both of its attempts must end).
  EXPECT_EQ(plan->cluster, "beta");
  EXPECT_EQ(plan->held.job, 7);
  EXPECT_EQ(plan->held.gpus, 8);
  EXPECT_EQ(plan->held.starts_ms, kNow + 2 * kHour);
  EXPECT_EQ(plan->held.spare_gpus, 0);
}

TEST_F(BackfillTest, AnAttemptWithoutATimeLimitMakesTheStartUnknownAndAKnownOneWins) {
  auto plan = plan_hold(pipeline, request(big, 7), views,
                        {ends("alpha", 4, std::nullopt), ends("beta", 8, kNow + 5 * kHour)});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->cluster, "beta") << "a known start, however late, before an unknown one";
  auto unknown = plan_hold(pipeline, request(big, 7), views,
                           {ends("alpha", 4, std::nullopt), ends("beta", 8, std::nullopt)});
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->cluster, "alpha") << "both unknown: the clusters' order";
  EXPECT_FALSE(unknown->held.starts_ms);
}

TEST_F(BackfillTest, SpareGpusAreWhatIsFreeAtTheStartBeyondTheNeed) {
  JobSpec four = make_job().gpus(4);
  views[1].gpus_used = 8;
  // beta: two 4-GPU attempts end in 1 h; the 4-GPU job needs one of them: 4 spare then.
  auto plan = plan_hold(pipeline, request(four, 9), {views[1]},
                        {ends("beta", 4, kNow + kHour), ends("beta", 4, kNow + kHour)});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->held.starts_ms, kNow + kHour);
  EXPECT_EQ(plan->held.spare_gpus, 4);
}

TEST_F(BackfillTest, NoHoldWhereAnotherFilterRejectsTheJobEvenOnceEmpty) {
  views[0].health = SiteHealth::unreachable;
  JobSpec only_alpha = make_job().nodes(2).gpus(4).on({"alpha"});
  EXPECT_FALSE(plan_hold(pipeline, request(only_alpha, 7), views,
                         {ends("alpha", 4, kNow + kHour), ends("beta", 8, kNow + kHour)}));
  JobSpec too_big = make_job().nodes(3).gpus(4);
  EXPECT_FALSE(plan_hold(pipeline, request(too_big, 7), views, {}));
}

class HeldGpusFilterTest : public BackfillTest {
 protected:
  HeldGpusFilter filter;
  // alpha holds 8 GPUs for job 7 (priority 100), which starts there in 2 h, 2 spare.
  ClusterView held_alpha() const {
    ClusterView v = views[0];
    v.held = HeldGpus{7, 100, 8, kNow + 2 * kHour, 2};
    return v;
  }
};

TEST_F(HeldGpusFilterTest, AJobThatEndsBeforeTheHeldJobStartsPasses) {
  JobSpec short_job = make_job().gpus(4).priority(100).time_limit_s(7200);
  EXPECT_EQ(filter.reject(request(short_job, 8), held_alpha()), std::nullopt);
}

TEST_F(HeldGpusFilterTest, AJobThatEndsLaterOrHasNoLimitIsRejectedWithWhy) {
  JobSpec long_job = make_job().gpus(4).priority(100).time_limit_s(7201);
  auto why = filter.reject(request(long_job, 8), held_alpha());
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "GPUs held for job 7 (8 GPU(s)), which starts here in 7200 s at the latest; 2 spare: "
            "this job's time_limit ends after that");
  JobSpec no_limit = make_job().gpus(4);
  why = filter.reject(request(no_limit, 8), held_alpha());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("a job whose time_limit ends by then may use them"), std::string::npos);
}

TEST_F(HeldGpusFilterTest, SpareGpusTheHeldJobsHigherPrioritiesAndTheHeldJobItselfPass) {
  JobSpec two = make_job().gpus(2);
  EXPECT_EQ(filter.reject(request(two, 8), held_alpha()), std::nullopt) << "2 spare";
  JobSpec hero = make_job().gpus(4).priority(1000);
  EXPECT_EQ(filter.reject(request(hero, 8), held_alpha()), std::nullopt);
  JobSpec equal = make_job().gpus(4).priority(100);
  EXPECT_TRUE(filter.reject(request(equal, 8), held_alpha())) << "equal priority is held back";
  EXPECT_EQ(filter.reject(request(big, 7), held_alpha()), std::nullopt);
  ClusterView unknown = held_alpha();
  unknown.held->starts_ms.reset();
  unknown.held->spare_gpus = 0;
  JobSpec short_job = make_job().gpus(1).time_limit_s(1);
  auto why = filter.reject(request(short_job, 8), unknown);
  ASSERT_TRUE(why) << "an unknown start: no end is early enough";
  EXPECT_NE(why->find("when attempts without a time limit end"), std::string::npos);
}

}  // namespace
}  // namespace orch::testing
