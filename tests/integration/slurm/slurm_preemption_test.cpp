// Issue 18's acceptance on real Slurm. Preemption: two lab clusters full of ablations (one 8-GPU
// job each); a hero job of higher priority comes; the ablation with fewer steps at risk gets
// SIGUSR1 (scancel --signal to its steps, passed on by the agent), saves, and is stopped; the hero
// runs within the grace plus one poll; the ablation resumes from the checkpoint it saved and
// finishes with no restart spent. Queue-aware failover: a job queued behind another tenant moves.
#include <gmock/gmock.h>

#include <chrono>

#include "tests/integration/slurm/slurm_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

class SlurmPreemptionTest : public SlurmE2eTest {
 protected:
  // The whole cluster: 1 node x 8 GPUs.
  static std::string whole_cluster(std::string yaml) {
    const std::string from = "gpus_per_node: 2";
    yaml.replace(yaml.find(from), from.size(), "gpus_per_node: 8");
    return yaml;
  }
};

TEST_F(SlurmPreemptionTest, AHeroJobRunsWithinTheGraceAndTheVictimResumesFromItsOwnSave) {
  constexpr double kGraceS = 30;
  const std::string ablation = "--steps 400 --step-delay-ms 50 --ckpt-every 100000";
  const std::string more = "priority: 100\npreemption: {grace_s: 30}\n";
  // a runs well ahead of b: b has fewer steps at risk.
  const std::int64_t a = submit(
      whole_cluster(job_yaml("ablation-a", ablation, more + "placement: {allowed: [alpha]}\n")));
  ASSERT_FALSE(wait_running_on(a, "alpha", 40).is_null()) << describe_job(url_, a);
  const std::int64_t b = submit(
      whole_cluster(job_yaml("ablation-b", ablation, more + "placement: {allowed: [beta]}\n")));
  ASSERT_FALSE(wait_running_on(b, "beta", 5).is_null()) << describe_job(url_, b);

  const auto asked = std::chrono::steady_clock::now();
  const std::int64_t hero =
      submit(whole_cluster(job_yaml("hero", "--steps 40 --step-delay-ms 20", "priority: 1000\n")));
  json running = wait_job(
      hero, [](const json& j) { return j["state"] == "running"; }, "run");
  ASSERT_FALSE(running.is_null()) << describe_job(url_, hero);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  std::printf("hero running on %s %.2f s after its submit (grace %.0f s)\n",
              running["cluster"].get<std::string>().c_str(), waited_s, kGraceS);
  EXPECT_LT(waited_s, kGraceS + 1.0) << "within preempt_grace_s plus one poll";

  // The victim is b (fewer steps at risk: it started later); it saved on the request.
  const json first_b = attempts(b).at(0);
  ASSERT_EQ(first_b["cause"], "priority_preempted") << describe_job(url_, b);
  EXPECT_EQ(running["cluster"], "beta");
  EXPECT_EQ(attempts(a).size(), 1u) << describe_job(url_, a);
  ProcessResult explain = cli({"job", "explain", std::to_string(b)});
  EXPECT_THAT(explain.output, HasSubstr("it saved a checkpoint at step")) << explain.output;

  EXPECT_EQ(wait_final(hero)["state"], "succeeded") << describe_job(url_, hero);
  json done = wait_final(b);
  EXPECT_EQ(done["state"], "succeeded") << describe_job(url_, b);
  EXPECT_EQ(done["infra_restarts"], 0);
  EXPECT_EQ(done["step"], 400);
  const json resumed = attempts(b).at(1);
  ASSERT_FALSE(resumed["resumed_from"].is_null()) << describe_job(url_, b);
  EXPECT_GT(resumed["resumed_from"]["step"].get<int>(), 5);
  EXPECT_EQ(wait_final(a)["state"], "succeeded") << describe_job(url_, a);
}

// Queue-aware failover: another tenant's job holds alpha's only node; our job, placed on alpha
// (orchestrate does not see the other tenant), waits there PENDING and moves to beta once its
// max_queue_s is over. Goal: running within max_queue_s plus one poll, under 60 s in all.
TEST_F(SlurmPreemptionTest, AJobQueuedBehindAnotherTenantMovesToBetaAfterMaxQueue) {
  constexpr double kMaxQueueS = 10;
  auto tenant = lab_->slurm(
      "alpha", {"sbatch", "--parsable", "--exclusive", "--job-name=tenant", "--wrap", "sleep 600"});
  ASSERT_TRUE(tenant.ok()) << tenant.error().message;
  ASSERT_TRUE(eventually([&] {
    auto q = lab_->slurm("alpha", {"squeue", "-h", "--name=tenant", "-o", "%T"});
    return q && q->find("RUNNING") != std::string::npos;
  }));

  const auto submitted = std::chrono::steady_clock::now();
  const std::int64_t id = submit(job_yaml("queued", "--steps 30 --step-delay-ms 20",
                                          "placement: {preferred: [alpha], max_queue_s: 10}\n"));
  json moved = wait_running_on(id, "beta", 1);
  ASSERT_FALSE(moved.is_null()) << describe_job(url_, id);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted).count();
  std::printf("running on beta %.2f s after its submit (max_queue_s %.0f)\n", waited_s, kMaxQueueS);
  EXPECT_LT(waited_s, 60.0);
  EXPECT_GE(waited_s, kMaxQueueS);
  const json first = attempts(id).at(0);
  EXPECT_EQ(first["cluster"], "alpha");
  EXPECT_EQ(first["cause"], "queue_timeout") << describe_job(url_, id);
  EXPECT_TRUE(eventually([&] {
    return slurm_jobs("alpha", first["token"]).size() == 1 &&
           slurm_jobs("alpha", first["token"])[0].find("CANCELLED") != std::string::npos;
  })) << "alpha's queue no longer holds it";
  json done = wait_final(id);
  EXPECT_EQ(done["state"], "succeeded") << describe_job(url_, id);
  EXPECT_EQ(done["infra_restarts"], 0);
}

}  // namespace
}  // namespace orch::e2e
