// Choosing the victims of a preemption (issue 18): the fewest steps at risk first, then the
// lowest priority; only what the job needs; only lower priorities; the cheapest cluster.
#include <gtest/gtest.h>

#include <map>

#include "scheduler/placement/preemption.h"
#include "tests/harness/builders.h"

namespace orch::testing {
namespace {

class PreemptionPlanTest : public ::testing::Test {
 protected:
  // alpha and beta: 2 nodes x 4 GPUs each, both full.
  ClusterSpec alpha = make_cluster("alpha");
  ClusterSpec beta = make_cluster("beta");
  std::vector<ClusterView> views{{&alpha, SiteHealth::healthy, 8, {}},
                                 {&beta, SiteHealth::healthy, 8, {}}};
  PlacementPipeline pipeline = PlacementPipeline::standard();
  JobSpec job = make_job().gpus(4);
  PlacementRequest req{&job};

  static PreemptionCandidate victim(std::int64_t id, const std::string& cluster, int gpus,
                                    int priority, std::int64_t steps) {
    return {id, id, cluster, gpus, priority, steps};
  }
  static std::vector<std::int64_t> ids(const PreemptionPlan& p) {
    std::vector<std::int64_t> out;
    for (const auto& v : p.victims) out.push_back(v.attempt);
    return out;
  }
};

TEST_F(PreemptionPlanTest, TakesTheVictimWithFewestStepsAtRiskThenTheLowestPriority) {
  auto plan = plan_preemption(pipeline, req, 1000, views,
                              {victim(1, "alpha", 4, 100, 40), victim(2, "alpha", 4, 100, 3),
                               victim(3, "beta", 4, 500, 3), victim(4, "beta", 4, 100, 30)});
  ASSERT_TRUE(plan);
  // alpha's victim 2 and beta's victim 3 both risk 3 steps; alpha comes first in the file.
  EXPECT_EQ(plan->cluster, "alpha");
  EXPECT_EQ(ids(*plan), std::vector<std::int64_t>{2});
  EXPECT_EQ(plan->steps_at_risk, 3);

  auto on_beta = plan_preemption(pipeline, req, 1000, views,
                                 {victim(3, "beta", 4, 500, 3), victim(4, "beta", 4, 100, 3)});
  ASSERT_TRUE(on_beta);
  EXPECT_EQ(ids(*on_beta), std::vector<std::int64_t>{4}) << "equal steps: the lower priority";
}

TEST_F(PreemptionPlanTest, TakesOnlyWhatTheJobNeedsAndGivesBackTheRest) {
  job = make_job().gpus(4);
  // Two 2-GPU victims with few steps, and one 4-GPU one with more than both together.
  auto plan = plan_preemption(
      pipeline, req, 1000, {views[0]},
      {victim(1, "alpha", 2, 0, 1), victim(2, "alpha", 2, 0, 2), victim(3, "alpha", 4, 0, 10)});
  ASSERT_TRUE(plan);
  EXPECT_EQ(ids(*plan), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(plan->steps_at_risk, 3);

  // A 4-GPU victim taken after a small one that turns out not to be needed is given back.
  views[0].gpus_used = 6;  // 2 free: a 2-GPU victim is enough
  auto small = plan_preemption(pipeline, req, 1000, {views[0]},
                               {victim(1, "alpha", 4, 0, 5), victim(2, "alpha", 2, 0, 6)});
  ASSERT_TRUE(small);
  EXPECT_EQ(ids(*small), std::vector<std::int64_t>{1}) << "the cheapest that is enough";
}

TEST_F(PreemptionPlanTest, NeverTakesEqualOrHigherPriorityOrWhatCannotMakeEnoughRoom) {
  EXPECT_FALSE(plan_preemption(pipeline, req, 100, views,
                               {victim(1, "alpha", 4, 100, 1), victim(2, "beta", 4, 200, 1)}));
  job = make_job().gpus(4).nodes(3);  // 12 GPUs: more than a cluster has
  EXPECT_FALSE(plan_preemption(pipeline, req, 1000, views,
                               {victim(1, "alpha", 4, 0, 1), victim(2, "alpha", 4, 0, 1)}));
  job = make_job().gpus(4).on({"beta"});
  auto plan = plan_preemption(pipeline, req, 1000, views,
                              {victim(1, "alpha", 4, 0, 1), victim(2, "beta", 4, 0, 9)});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->cluster, "beta") << "the job's allowed clusters still hold";
  views[1].health = SiteHealth::down;
  EXPECT_FALSE(plan_preemption(pipeline, req, 1000, views, {victim(2, "beta", 4, 0, 9)}));
}

TEST_F(PreemptionPlanTest, BorrowedGpusAreTakenBackFirstWhateverTheirPriorityOrSteps) {
  SchedulingSpec spec;
  spec.teams = {{"vision", {4, {}, true}}, {"nlp", {4, {}, true}}};
  // vision's attempt 1 is within its quota, 2 is borrowed; nlp holds nothing.
  TeamLedger ledger(spec, 16, {{2, "vision", "alpha", 4}, {1, "vision", "alpha", 4}});
  EXPECT_FALSE(ledger.borrowed(1));
  EXPECT_TRUE(ledger.borrowed(2));
  EXPECT_EQ(ledger.room("vision", "alpha"), -4);
  EXPECT_EQ(ledger.room("nlp", "alpha"), 4);
  EXPECT_EQ(ledger.room("nobody", "alpha"), 0) << "a team the file does not name has no quota";
  EXPECT_DOUBLE_EQ(ledger.dominant_share("vision"), 0.5);

  job = make_job().gpus(4).team("nlp");
  std::vector<PreemptionCandidate> candidates{victim(1, "alpha", 4, 100, 1),
                                              victim(2, "alpha", 4, 900, 50)};
  for (auto& c : candidates) c.team = "vision";
  auto mine = preemptible_by(job, ledger, /*reclaim=*/true, candidates);
  ASSERT_EQ(mine.size(), 1u) << "vision's job within its quota is protected, though cheaper";
  EXPECT_EQ(mine[0].attempt, 2);
  EXPECT_TRUE(mine[0].reclaim);
  auto plan = plan_preemption(pipeline, req, job.priority, views, mine);
  ASSERT_TRUE(plan);
  EXPECT_EQ(ids(*plan), std::vector<std::int64_t>{2});
  EXPECT_EQ(plan->not_borrowed, 0u);
  // Beyond its quota nothing is reclaimed, and priority 0 preempts nothing.
  EXPECT_TRUE(preemptible_by(job, ledger, /*reclaim=*/false, candidates).empty());
}

TEST_F(PreemptionPlanTest, AnotherTeamsAttemptWithinItsQuotaIsNotedAsProtectedWithItsUse) {
  SchedulingSpec spec;
  spec.teams = {{"vision", {4, {}, true}}, {"llm", {8, {}, true}}};
  TeamLedger ledger(spec, 16, {{1, "vision", "alpha", 4}});
  job = make_job().gpus(4).team("llm").priority(1000);
  std::vector<PreemptionCandidate> candidates{victim(1, "alpha", 4, 100, 1)};
  candidates[0].team = "vision";
  std::vector<PreemptionNote> notes;
  EXPECT_TRUE(preemptible_by(job, ledger, /*reclaim=*/true, candidates, &notes).empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].victim.job, 1);
  EXPECT_FALSE(notes[0].taken);
  EXPECT_EQ(notes[0].why, "team vision within its quota 4/4, protected");
}

TEST_F(PreemptionPlanTest, EachCandidateIsNotedTakenOrWhyNot) {
  std::vector<PreemptionNote> notes;
  // alpha: 1 is cheapest and enough, 2 is not needed, 3 is not of lower priority; beta's 4
  // would do but risks more steps.
  auto plan = plan_preemption(pipeline, req, 500, views,
                              {victim(1, "alpha", 4, 100, 3), victim(2, "alpha", 4, 100, 9),
                               victim(3, "alpha", 4, 500, 0), victim(4, "beta", 4, 100, 7)},
                              &notes);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->cluster, "alpha");
  std::map<std::int64_t, PreemptionNote> by_job;
  for (const auto& n : notes) by_job[n.victim.job] = n;
  ASSERT_EQ(by_job.size(), 4u);
  EXPECT_TRUE(by_job[1].taken);
  EXPECT_EQ(by_job[1].why,
            "taken: priority 100 below the job's 500; 3 step(s) at risk since its "
            "last checkpoint");
  EXPECT_FALSE(by_job[2].taken);
  EXPECT_EQ(by_job[2].why, "not needed: the job fits here without it");
  EXPECT_EQ(by_job[3].why, "priority 500, not below the job's 500");
  EXPECT_FALSE(by_job[4].taken);
  EXPECT_EQ(by_job[4].why,
            "not taken: making room here stops 1 attempt(s), 7 step(s) at risk; alpha loses "
            "less (1, 3 step(s) at risk)");

  // Not enough: even with every candidate gone the job does not fit.
  notes.clear();
  job = make_job().gpus(4).nodes(2);
  EXPECT_FALSE(
      plan_preemption(pipeline, req, 500, {views[0]}, {victim(1, "alpha", 4, 100, 3)}, &notes));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].why,
            "not enough: with every attempt it may stop here gone, capacity: only 4 of 8 GPUs "
            "free, job needs 8");
}

}  // namespace
}  // namespace orch::testing
