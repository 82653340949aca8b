// plan_launch: what placing a job on a cluster writes, decided without a store.
#include <gmock/gmock.h>

#include "scheduler/brain/launch_plan.h"
#include "tests/harness/builders.h"

namespace orch {
namespace {

using testing::make_cluster;
using testing::make_job;

constexpr Millis kNow = 1'700'000'000'000;

JobRow job_row(JobSpec spec) {
  JobRow j;
  j.id = 7;
  j.name = spec.name;
  j.spec = std::move(spec);
  return j;
}

AttemptRow ended(int no, const std::string& cluster, ExitCause cause,
                 std::optional<std::int64_t> first, std::optional<std::int64_t> last) {
  AttemptRow a;
  a.id = 100 + no;
  a.job_id = 7;
  a.no = no;
  a.cluster = cluster;
  a.state = AttemptState::exited;
  a.cause = cause;
  a.first_step = first;
  a.last_step = last;
  return a;
}

struct Planned {
  JobRow job;
  std::vector<AttemptRow> attempts;
  ClusterSpec site = make_cluster("alpha");
  LaunchPlanInput in;
  LaunchPlan plan() {
    in.job = &job;
    in.attempts = &attempts;
    in.site = &site;
    in.now = kNow;
    return plan_launch(in);
  }
};

TEST(PlanLaunch, AFirstAttemptStartsFromTheBeginningWithTheJobsOwnEnvironment) {
  Planned p{job_row(make_job().name("train").nodes(2).gpus(4).hang_after_s(90))};
  p.job.spec.env["SEED"] = "1";
  const LaunchPlan plan = p.plan();
  EXPECT_EQ(plan.attempt.no, 1);
  EXPECT_EQ(plan.attempt.cluster, "alpha");
  EXPECT_EQ(plan.attempt.gpus, 8);
  EXPECT_EQ(plan.attempt.hang_after_ms, 90'000);
  EXPECT_EQ(plan.attempt.token, attempt_token(7, 1, kNow));
  EXPECT_THAT(plan.attempt.token, ::testing::StartsWith("orch-7-1-"));
  EXPECT_FALSE(plan.attempt.resumed_from_step.has_value());
  EXPECT_FALSE(plan.previous.has_value());
  EXPECT_TRUE(plan.from_the_start);
  EXPECT_EQ(plan.placed_message, "attempt 1 placed on alpha from the start");
  EXPECT_EQ(plan.launch.token, plan.attempt.token);
  EXPECT_EQ(plan.launch.nodes, 2);
  EXPECT_EQ(plan.launch.gpus_per_node, 4);
  EXPECT_EQ(plan.launch.env, (std::map<std::string, std::string>{
                                 {"SEED", "1"}, {"ORCH_CHECKPOINT_DIR", "/checkpoints/job-7"}}));
  EXPECT_TRUE(plan.launch.resume_candidates.empty());
}

// Issue 40: the job's shell and Slurm shape go with every launch.
TEST(PlanLaunch, TheLaunchCarriesTheJobsShellAndShape) {
  Planned p{job_row(make_job().name("shape"))};
  p.job.spec.shell = "bash-login";
  p.job.spec.cpus_per_task = 12;
  p.job.spec.memory_mb = 65536;
  p.job.spec.slurm.account = "proj-a";
  p.job.spec.slurm.exclusive = true;
  const LaunchPlan plan = p.plan();
  EXPECT_EQ(plan.launch.shell, "bash-login");
  EXPECT_EQ(plan.launch.cpus_per_task, 12);
  EXPECT_EQ(plan.launch.memory_mb, 65536);
  EXPECT_EQ(plan.launch.slurm, p.job.spec.slurm);
}

TEST(PlanLaunch, AJobThatSavedYetStartsOverSaysNoCheckpointHasAGoodCopyThere) {
  Planned p{job_row(make_job())};
  p.in.saved_before = true;  // saved elsewhere, nothing to resume from here
  const LaunchPlan plan = p.plan();
  EXPECT_TRUE(plan.from_the_start);
  EXPECT_EQ(plan.placed_message,
            "attempt 1 placed on alpha from the start (no checkpoint has a good copy at alpha)");
}

TEST(PlanLaunch, AResumeTakesTheNewestCandidateAndChargesThePreviousAttemptItsLostSteps) {
  Planned p{job_row(make_job().resume_env("RESUME_FROM"))};
  p.attempts = {ended(1, "alpha", ExitCause::node_lost, 1, 250)};
  p.in.candidates = {{11, 200, "/ckpt/200", {}}, {10, 100, "/ckpt/100", {}}};
  const LaunchPlan plan = p.plan();
  EXPECT_EQ(plan.attempt.no, 2);
  EXPECT_EQ(plan.attempt.resumed_from_step, 200);
  EXPECT_EQ(plan.attempt.resumed_from_path, "/ckpt/200");
  ASSERT_TRUE(plan.previous.has_value());
  EXPECT_EQ(plan.previous->no, 1);
  EXPECT_EQ(plan.previous->steps_lost, 50) << "steps 201..250 are done again";
  EXPECT_EQ(plan.launch.env.at("RESUME_FROM"), "/ckpt/200");
  EXPECT_EQ(plan.launch.resume_env, "RESUME_FROM");
  EXPECT_EQ(plan.launch.resume_candidates.size(), 2u) << "the site worker checks each in turn";
  EXPECT_FALSE(plan.from_the_start);
  EXPECT_EQ(plan.placed_message, "attempt 2 placed on alpha resuming from step 200 (/ckpt/200)");
}

TEST(PlanLaunch, TheSiteAndTheStagedDataAddToTheEnvironmentAndNodesAreExcluded) {
  Planned p{job_row(make_job())};
  p.site.checkpoint_root = "/lustre/ckpt";
  p.in.data_env = {{"ORCH_DATASET_TOKENS", "/data/tokens"}};
  p.in.exclude_nodes = {"a3", "a7"};
  const LaunchPlan plan = p.plan();
  EXPECT_EQ(plan.launch.env.at("ORCH_CHECKPOINT_ROOT"), "/lustre/ckpt");
  EXPECT_EQ(plan.launch.env.at("ORCH_DATASET_TOKENS"), "/data/tokens");
  EXPECT_EQ(plan.launch.exclude_nodes, (std::vector<std::string>{"a3", "a7"}));
}

// Tiered checkpoints: each node's own directory is named (its agent fills in "{node}"), and a
// node's copy is a candidate only for a one-node job on a node the launch may use.
TEST(PlanLaunch, ANodesOwnCopyIsReadOnlyByAOneNodeJobOnThatNode) {
  Planned p{job_row(make_job().nodes(1))};
  p.site.node_local_root = "/local/{node}/orch";
  ResumeCandidate on_a1{9, 300, "/local/a1/orch/job-1/step-300", {}, "", "a1"};
  ResumeCandidate on_a3{8, 300, "/local/a3/orch/job-1/step-300", {}, "", "a3"};
  ResumeCandidate shared{9, 300, "/ckpt/job-1/step-300", {}, "", ""};
  p.in.candidates = {on_a3, on_a1, shared};
  p.in.exclude_nodes = {"a3"};
  LaunchPlan plan = p.plan();
  EXPECT_EQ(plan.launch.env.at("ORCH_LOCAL_CHECKPOINT_DIR"), "/local/{node}/orch/job-7");
  EXPECT_EQ(plan.launch.env.count("ORCH_DRAIN_BYTES_PER_S"), 0u) << "no transfer cap";
  p.site.data.bwlimit_mb_s = 250;
  EXPECT_EQ(p.plan().launch.env.at("ORCH_DRAIN_BYTES_PER_S"), "250000000");
  p.job.spec.env["ORCH_DRAIN_BYTES_PER_S"] = "1000";
  EXPECT_EQ(p.plan().launch.env.at("ORCH_DRAIN_BYTES_PER_S"), "1000") << "the job's own wins";
  ASSERT_EQ(plan.launch.resume_candidates.size(), 2u);
  EXPECT_EQ(plan.launch.resume_candidates[0].node, "a1") << "a3 is excluded";
  EXPECT_EQ(plan.launch.resume_candidates[1].node, "");

  Planned gang{job_row(make_job().nodes(2))};
  gang.in.candidates = {on_a1, shared};
  plan = gang.plan();
  ASSERT_EQ(plan.launch.resume_candidates.size(), 1u) << "a gang's other node cannot read a1's";
  EXPECT_EQ(plan.launch.resume_candidates[0].path, "/ckpt/job-1/step-300");
}

TEST(PlanLaunch, EachJobGetsItsOwnCheckpointDirectoryUnderTheSitesRoot) {
  Planned p{job_row(make_job())};
  p.site.checkpoint_root = "/lustre/ckpt/";
  const LaunchPlan plan = p.plan();
  EXPECT_EQ(plan.attempt.checkpoint_dir, "/lustre/ckpt/job-7");
  EXPECT_EQ(plan.launch.checkpoint_dir, "/lustre/ckpt/job-7");
  EXPECT_EQ(plan.launch.env.at("ORCH_CHECKPOINT_DIR"), "/lustre/ckpt/job-7");
  EXPECT_EQ(plan.launch.env.at("ORCH_CHECKPOINT_ROOT"), "/lustre/ckpt/") << "kept as it was";

  // Without a checkpoint root: <storage root>/checkpoints.
  Planned q{job_row(make_job())};
  q.site.storage_root = "/data/orch";
  EXPECT_EQ(q.plan().launch.env.at("ORCH_CHECKPOINT_DIR"), "/data/orch/checkpoints/job-7");
  EXPECT_EQ(q.plan().launch.env.count("ORCH_CHECKPOINT_ROOT"), 0u);
}

TEST(PlanLaunch, ARelativeCheckpointDirIsASubdirectoryAndAnOldAbsoluteOneIsIgnored) {
  Planned p{job_row(make_job())};
  p.site.checkpoint_root = "/ckpt";
  p.job.spec.checkpoint.dir = "run1";
  LaunchPlan plan = p.plan();
  EXPECT_EQ(plan.attempt.checkpoint_dir, "/ckpt/job-7") << "what its reports must lie in";
  EXPECT_EQ(plan.launch.checkpoint_dir, "/ckpt/job-7/run1") << "what it is told and given";
  EXPECT_EQ(plan.launch.env.at("ORCH_CHECKPOINT_DIR"), "/ckpt/job-7/run1");

  // A spec stored before checkpoint.dir had to be relative.
  p.job.spec.checkpoint.dir = "/elsewhere/run1";
  plan = p.plan();
  EXPECT_EQ(plan.launch.checkpoint_dir, "/ckpt/job-7");
  EXPECT_EQ(plan.launch.env.at("ORCH_CHECKPOINT_DIR"), "/ckpt/job-7");
}

TEST(PlanLaunch, ACancelledDuplicateDoesNotCarryTheJob) {
  Planned p{job_row(make_job())};
  AttemptRow carried = ended(1, "alpha", ExitCause::node_lost, 1, 100);
  AttemptRow duplicate = ended(2, "beta", ExitCause::cancelled, 1, 40);
  duplicate.cancel_requested = true;
  p.attempts = {carried, duplicate};
  const LaunchPlan plan = p.plan();
  EXPECT_EQ(plan.attempt.no, 3);
  ASSERT_TRUE(plan.previous.has_value());
  EXPECT_EQ(plan.previous->no, 1);
}

TEST(PlacementRequestFor, StaysAfterACrashMovesAwayAfterALostLaunchAvoidsLostNodes) {
  const JobRow job = job_row(make_job());
  EXPECT_FALSE(placement_request(job, {}).previous_cluster.has_value());
  auto crashed = ended(1, "alpha", ExitCause::user_error, 1, 10);
  EXPECT_EQ(placement_request(job, {crashed}).previous_cluster, "alpha");
  auto lost = ended(1, "alpha", ExitCause::launch_failed, std::nullopt, std::nullopt);
  EXPECT_EQ(placement_request(job, {lost}).avoid_cluster, "alpha");
  auto node = ended(1, "alpha", ExitCause::node_lost, 1, 10);
  node.nodes = {"a2"};
  const PlacementRequest r = placement_request(job, {node});
  EXPECT_EQ(r.previous_cluster, "alpha");
  EXPECT_EQ(r.avoid_nodes, (std::vector<std::string>{"a2"}));
}

}  // namespace
}  // namespace orch
