// The batch script for a job's `container:` (container_words.h, issue 40): pyxis's options on the
// tasks' srun and the setup's, with orchestrate's directories mounted at the same paths;
// apptainer's words before the job's shell; a cluster without a runtime refuses the launch.
#include "adapters/slurm/container_words.h"

#include <gmock/gmock.h>

#include "adapters/slurm/batch_script.h"
#include "scheduler/model/workdir.h"

namespace orch::slurm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kAgent = "/shared/orch/bin/orchestrate-agent";
const std::string kHash(64, 'c');

LaunchRequest in_image() {
  LaunchRequest r;
  r.token = "orch-41-1-abc";
  r.job_id = 41;
  r.attempt_no = 1;
  r.job_name = "ngc";
  r.command = "exec python -m mypkg.train";
  r.nodes = 2;
  r.container.image = "nvcr.io#nvidia/pytorch:24.05-py3";
  r.container.mounts = {{"/datasets", "/datasets", true}};
  r.container.env = {"HF_TOKEN"};
  return r;
}

ClusterSpec cluster(ContainerRuntime runtime) {
  ClusterSpec c;
  c.name = "alpha";
  c.provider = "slurm";
  c.storage_root = "/shared/orch";
  c.checkpoint_root = "/ckpt";
  c.slurm.containers = runtime;
  return c;
}

TEST(ContainerScript, PyxisOptionsGoToTheTasksSrunWithOrchestratesDirectoriesMounted) {
  auto plan = make_batch_plan(in_image(), cluster(ContainerRuntime::pyxis), kAgent);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_THAT(plan->script, HasSubstr("srun '--container-image=nvcr.io#nvidia/pytorch:24.05-py3' "
                                      "'--container-mounts=/shared/orch:/shared/orch,/ckpt:/ckpt,"
                                      "/datasets:/datasets:ro' "
                                      "'--container-workdir=/shared/orch/runs/orch-41-1-abc/work' "
                                      "'--container-env=HF_TOKEN' --nodes=2"));
  EXPECT_THAT(plan->script, Not(HasSubstr("apptainer")));
}

TEST(ContainerScript, PyxisStartsInTheCodeAndRunsTheSetupInTheImage) {
  LaunchRequest r = in_image();
  r.code_sha256 = kHash;
  r.workdir = code_tree_path("/shared/orch", kHash);
  r.code_archive = code_archive_path("/shared/orch", kHash);
  r.setup = "pip install -e .";
  r.setup_key = setup_key("alpha", kHash, r.setup, r.container.image);
  r.setup_dir = setup_dir_path("/shared/orch", r.setup_key);
  auto plan = make_batch_plan(r, cluster(ContainerRuntime::pyxis), kAgent);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_THAT(plan->script, HasSubstr("'--container-workdir=" + r.workdir + "'"));
  EXPECT_THAT(plan->script,
              HasSubstr("srun --nodes=1 --ntasks=1 '--container-image=nvcr.io#nvidia/"));
}

TEST(ContainerScript, ApptainerWrapsTheJobsShellAndNotTheAgent) {
  auto plan = make_batch_plan(in_image(), cluster(ContainerRuntime::apptainer), kAgent);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_THAT(plan->script,
              HasSubstr(" -- 'apptainer' 'exec' '--nv' '--bind' "
                        "'/shared/orch:/shared/orch,/ckpt:/ckpt,/datasets:/datasets:ro' "
                        "'--pwd' "
                        "'/shared/orch/runs/orch-41-1-abc/work' "
                        "'nvcr.io#nvidia/pytorch:24.05-py3' "));
  EXPECT_THAT(plan->script, Not(HasSubstr("--container-image")));
}

TEST(ContainerScript, AClusterWithoutARuntimeRefusesTheLaunch) {
  auto plan = make_batch_plan(in_image(), cluster(ContainerRuntime::none), kAgent);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind, ErrorKind::invalid);
  EXPECT_THAT(plan.error().message, HasSubstr("slurm.containers is none"));
}

TEST(ContainerScript, AJobWithoutAContainerGetsNoWords) {
  LaunchRequest r = in_image();
  r.container = {};
  auto words = container_words(r, cluster(ContainerRuntime::pyxis), kAgent, "/w");
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(words->srun_options, "");
  EXPECT_EQ(words->exec_prefix, "");
}

}  // namespace
}  // namespace orch::slurm
