// Priorities and checkpoint-aware preemption (issue 18) through the real server, two local
// sites of one 2-slot node each and the toy trainer: two ablations fill the fleet; a hero job
// comes; the ablation with fewer steps at risk gets SIGUSR1, saves, is stopped and waits; the
// hero runs; the ablation then resumes from the checkpoint it saved, with no restart spent.
#include <gmock/gmock.h>

#include <chrono>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

class PreemptionE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    start_with(local_clusters_yaml(1, 2) + "priority_classes: {hero: 1000, ablation: 100}\n");
  }
};

TEST_F(PreemptionE2eTest, AHeroJobPreemptsTheCheapestAblationWhichResumesFromItsSave) {
  // Checkpoints only when asked (every 100000 steps otherwise).
  const std::string ablation = "--steps 300 --step-delay-ms 20 --ckpt-every 100000";
  const std::string more = "priority: ablation\npreemption: {grace_s: 20}\n" + restart_yaml(0);
  const std::int64_t a = submit(job_yaml("ablation-a", ablation, more));
  ASSERT_FALSE(wait_step(a, 5).is_null()) << describe_job(url_, a);
  const std::int64_t b = submit(job_yaml("ablation-b", ablation, more));
  ASSERT_FALSE(wait_step(b, 5).is_null()) << describe_job(url_, b);

  const auto asked = std::chrono::steady_clock::now();
  const std::int64_t hero =
      submit(job_yaml("hero", "--steps 20 --step-delay-ms 20", "priority: hero\n"));
  json running = wait_job(
      hero, [](const json& j) { return j["state"] == "running"; }, "run");
  ASSERT_FALSE(running.is_null()) << describe_job(url_, hero);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  std::printf("hero running %.2f s after its submit\n", waited_s);
  EXPECT_LT(waited_s, 20.0) << "well within the victims' grace: the victim saved and stopped";

  // Exactly one victim: the one with fewer steps at risk (the later one).
  const json first_a = attempts(a)[0];
  const json first_b = attempts(b)[0];
  const std::int64_t victim = first_a["cause"] == "priority_preempted" ? a : b;
  const std::int64_t spared = victim == a ? b : a;
  ASSERT_EQ(attempts(victim)[0]["cause"], "priority_preempted") << describe_job(url_, victim);
  EXPECT_EQ(attempts(spared).size(), 1u);

  ProcessResult explain = cli({"job", "explain", std::to_string(victim)});
  ASSERT_EQ(explain.exit_code, 0) << explain.output;
  EXPECT_THAT(explain.output, HasSubstr("priority: 100 (ablation)"));
  EXPECT_THAT(explain.output, HasSubstr("asked to save (SIGUSR1)"));
  EXPECT_THAT(explain.output, HasSubstr("it saved a checkpoint at step"));
  ProcessResult hero_explain = cli({"job", "explain", std::to_string(hero)});
  EXPECT_THAT(hero_explain.output, HasSubstr("preemption: preempting on"));

  // Everyone finishes; the victim resumed from its own save and spent no restart.
  EXPECT_EQ(wait_final(hero)["state"], "succeeded") << describe_job(url_, hero);
  json done = wait_final(victim);
  EXPECT_EQ(done["state"], "succeeded") << describe_job(url_, victim);
  EXPECT_EQ(done["infra_restarts"], 0);
  EXPECT_EQ(done["step"], 300);
  const json resumed = attempts(victim).at(1);
  ASSERT_FALSE(resumed["resumed_from"].is_null()) << describe_job(url_, victim);
  EXPECT_GT(resumed["resumed_from"]["step"].get<int>(), 5);
  EXPECT_EQ(wait_final(spared)["state"], "succeeded") << describe_job(url_, spared);
}

}  // namespace
}  // namespace orch::e2e
