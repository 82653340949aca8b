// What the world credits a job with (issue 45): the steps its model holds, each where and how fast
// it was made, whichever runs made them. A resume from a checkpoint ahead of what the job had
// kept brings that checkpoint's steps back (a baseline that fails over and back again is
// credited exactly, as the brain is); a run the job has left keeps nothing; the job's own
// failures (SimJob::mtbf_s) end its runs whatever its size, with no node to blame.
#include <gmock/gmock.h>

#include <memory>
#include <mutex>
#include <numeric>

#include "adapters/sim/sim_site.h"
#include "simulator/world/sim_world.h"
#include "tests/unit/sim/sim_job_builder.h"

namespace orch::sim {
namespace {

constexpr double kHour = 3600;

// No node fails; 2 nodes of 8 H100s, at `mfu` (0.4: 1 s per step of the job below).
SimCluster quiet_cluster(const std::string& name, double mfu) {
  SimCluster c;
  c.name = name;
  c.nodes = 2;
  c.mfu = mfu;
  c.law = {FailureLaw::Kind::exponential, 1e9 * kHour, 1};
  c.restart_s = 600;
  return c;
}

SimJob job(double mtbf_s = 0) {
  return llm_job(mtbf_s);
}

LaunchRequest request(const std::string& token, const std::string& resume = "") {
  LaunchRequest r;
  r.token = token;
  r.job_name = "llm";
  r.nodes = 2;
  r.gpus_per_node = 8;
  if (!resume.empty()) r.env[r.resume_env] = resume;
  return r;
}

struct TwoClusters {
  explicit TwoClusters(SimJob j = job()) {
    world = std::move(SimWorld::make(3, {quiet_cluster("a", 0.4), quiet_cluster("b", 0.2)},
                                     {std::move(j)}, CauseMix::make(llama3_cause_mix()).value())
                          .value());
    for (std::size_t i = 0; i < 2; ++i) {
      sites.push_back(std::make_unique<SimSite>(*world, lock, i, 0));
    }
  }
  std::unique_ptr<SimWorld> world;
  std::mutex lock;
  std::vector<std::unique_ptr<SimSite>> sites;
};

std::int64_t sum_of(const std::vector<KeptSteps>& kept) {
  return std::accumulate(kept.begin(), kept.end(), std::int64_t{0},
                         [](std::int64_t n, const KeptSteps& k) { return n + (k.to - k.from); });
}

void expect_contiguous_from_zero(const std::vector<KeptSteps>& kept) {
  std::int64_t at = 0;
  for (const KeptSteps& k : kept) {
    EXPECT_EQ(k.from, at);
    EXPECT_GT(k.to, k.from);
    at = k.to;
  }
}

TEST(KeptSteps, AResumeFromACheckpointAheadOfTheJobsProgressCreditsEveryStepItHolds) {
  TwoClusters w;
  // On a: 600 s to start, then 1,910 steps in 2,000 s (three saves of 30 s, at 600, 1200, 1800).
  ASSERT_TRUE(w.sites[0]->launch(request("t1")).ok());
  w.world->advance_to(600 + 2000);
  ASSERT_TRUE(w.sites[0]->cancel("t1").ok());
  EXPECT_EQ(w.world->truth("llm").kept_steps(), 1910);
  // Fails over to b from the older checkpoint at 600 (copied there), 100 steps at 2 s a step.
  ASSERT_TRUE(w.world->copy(0, "/sim/ckpt/llm/step-600", 1, "/sim/ckpt/llm/step-600"));
  ASSERT_TRUE(w.sites[1]->launch(request("t2", "/sim/ckpt/llm/step-600")).ok());
  w.world->advance_to(2600 + 600 + 200);
  ASSERT_TRUE(w.sites[1]->cancel("t2").ok());
  EXPECT_EQ(w.world->truth("llm").kept_steps(), 700);
  // Back on a, from its checkpoint at 1800: ahead of the 700 steps the job had kept.
  ASSERT_TRUE(w.sites[0]->launch(request("t3", "/sim/ckpt/llm/step-1800")).ok());
  w.world->advance_to(3400 + 600 + 50);

  const JobTruth truth = w.world->truth("llm");
  EXPECT_EQ(truth.kept_steps(), 1850);
  EXPECT_EQ(sum_of(truth.kept), 1850);  // every step the model holds is credited once
  expect_contiguous_from_zero(truth.kept);
  for (const KeptSteps& k : truth.kept) {
    EXPECT_EQ(k.cluster, "a") << k.from << ".." << k.to;  // b's 100 steps are not in the model
    EXPECT_DOUBLE_EQ(k.step_s, 1.0);
  }
  EXPECT_EQ(truth.steps_made, 1910 + 100 + 50);
  EXPECT_EQ(truth.steps_lost, 110 + 100);  // t1's steps past 1800, and all of t2's
}

TEST(KeptSteps, ARunTheJobHasLeftKeepsNothingItMakesAfterwards) {
  TwoClusters w;
  ASSERT_TRUE(w.sites[0]->launch(request("t1")).ok());
  w.world->advance_to(600 + 300);
  ASSERT_TRUE(w.sites[1]->launch(request("t2")).ok());  // from scratch, while t1 still trains
  w.world->advance_to(900 + 600 + 100);                 // t2: 50 steps at 2 s
  ASSERT_TRUE(w.sites[0]->cancel("t1").ok());           // t1: 970 steps, none kept

  const JobTruth truth = w.world->truth("llm");
  EXPECT_EQ(truth.kept_steps(), 50);
  EXPECT_EQ(sum_of(truth.kept), 50);
  ASSERT_EQ(truth.kept.size(), 1u);
  EXPECT_EQ(truth.kept[0].cluster, "b");
  EXPECT_EQ(truth.steps_lost, 970);  // all made on a, and dropped
}

TEST(KeptSteps, TheJobsOwnFailuresEndItsRunWithNoNodeToBlame) {
  TwoClusters w(job(/*mtbf_s=*/kHour));
  int failures = 0;
  double at = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string token = "t" + std::to_string(i);
    ASSERT_TRUE(w.sites[0]->launch(request(token)).ok());
    auto obs = w.sites[0]->observe(token, 0);
    while (obs && obs->phase != RunPhase::exited) {
      at = w.world->next_change(0, at);
      w.world->advance_to(at);
      obs = w.sites[0]->observe(token, 0);
    }
    ASSERT_TRUE(obs && obs->exit);
    EXPECT_EQ(obs->exit->cause, ExitCause::network_error);
    EXPECT_TRUE(obs->exit->failed_node.empty());
    ++failures;
  }
  const JobTruth truth = w.world->truth("llm");
  ASSERT_EQ(truth.interruptions.size(), 400u);
  for (const Interruption& i : truth.interruptions) EXPECT_EQ(i.cause, "job");
  // 400 failures at a mean of an hour from each grant: 400 h, give or take 3 sd (5%).
  EXPECT_NEAR(at / kHour, 400.0, 60.0);
  EXPECT_EQ(failures, 400);
}

}  // namespace
}  // namespace orch::sim
