// Issue 18's acceptance on real Slurm. Preemption: two lab clusters full of ablations (one 8-GPU
// job each); a hero job of higher priority comes; the ablation with fewer steps at risk gets
// SIGUSR1 (scancel --signal to its steps, passed on by the agent), saves, and is stopped; the hero
// runs within the grace plus one poll; the ablation resumes from the checkpoint it saved and
// finishes with no restart spent. Another tenant's GPUs, as sinfo reports them, are placed
// around; a job queued behind what sinfo cannot show (a reservation) moves after max_queue_s.
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
  // GPUs of alpha that orchestrate counts as held by other tenants (GET /api/v1/clusters).
  int alpha_gpus_foreign() {
    const json body = get_json(url_, "/api/v1/clusters");
    for (const auto& c : body["clusters"]) {
      if (c["name"] == "alpha") return c.value("gpus_foreign", -1);
    }
    return -1;
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

// Free capacity from the site: another tenant's --exclusive job fills alpha's only node. Slurm's
// sinfo shows it (no idle CPU, all 8 GPUs in use), so orchestrate counts those GPUs as taken
// and a job that prefers alpha runs on beta at once, in one attempt, instead of queueing.
TEST_F(SlurmPreemptionTest, AnotherTenantsJobThatFillsAlphaSendsOurJobToBetaAtOnce) {
  auto tenant = lab_->slurm("alpha", {"sbatch", "--parsable", "--exclusive", "--job-name=tenant",
                                      "--output=/dev/null", "--wrap", "sleep 600"});
  ASSERT_TRUE(tenant.ok()) << tenant.error().message;
  ASSERT_TRUE(eventually([&] { return alpha_gpus_foreign() == 8; }))
      << "orchestrate never saw the tenant's GPUs: "
      << get_json(url_, "/api/v1/clusters")["clusters"].dump();

  const auto submitted = std::chrono::steady_clock::now();
  const std::int64_t id = submit(job_yaml("around", "--steps 30 --step-delay-ms 20",
                                          "placement: {preferred: [alpha], max_queue_s: 10}\n"));
  json running = wait_running_on(id, "beta", 1);
  ASSERT_FALSE(running.is_null()) << describe_job(url_, id);
  std::printf("running on beta %.2f s after its submit\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted).count());
  EXPECT_EQ(attempts(id).size(), 1u) << "never queued at alpha: " << describe_job(url_, id);
  EXPECT_EQ(wait_final(id)["state"], "succeeded") << describe_job(url_, id);
}

// Queue-aware failover: a reservation for another tenant holds alpha's only node. sinfo shows it
// as an idle node ("reserved", no GPU in use) and does not say whose, so our job, placed on
// alpha, waits there PENDING (ReqNodeNotAvail) and moves to beta once its max_queue_s is over.
// Goal: running within max_queue_s plus one poll, under 60 s in all.
TEST_F(SlurmPreemptionTest, AJobQueuedBehindAnotherTenantMovesToBetaAfterMaxQueue) {
  constexpr double kMaxQueueS = 10;
  const std::string node = lab_->cluster("alpha").nodes.at(0);
  auto reserved =
      lab_->slurm("alpha", {"scontrol", "create", "reservation", "reservationname=tenant",
                            "starttime=now", "duration=60", "nodes=" + node, "users=root"});
  ASSERT_TRUE(reserved.ok()) << reserved.error().message;
  ASSERT_TRUE(eventually([&] {
    auto s = lab_->slurm("alpha", {"sinfo", "-h", "-N", "-o", "%T"});
    return s && s->find("reserved") != std::string::npos;
  })) << "the reservation never showed";

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
