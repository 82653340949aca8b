// A job's `container:` on a real lab cluster that declares slurm.containers: pyxis (issue 40,
// item 4; label slurm). The lab loads a stand-in for pyxis (testkit/pyxis_standin): the real
// srun must accept the options job.sh gives it and deliver them to every task, which records
// them; it runs no container, so the agent runs as it would inside one and must still heartbeat.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/slurm/slurm_site.h"
#include "testkit/slurm_lab.h"
#include "tests/integration/slurm_lab/site_run.h"

namespace orch::test {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

const std::string kAgent = ORCH_BIN_DIR "/orchestrate-agent";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SlurmContainerLab, PyxisOptionsReachEveryTaskAndTheAgentHeartbeatsFromInside) {
  auto started = SlurmLab::start({"alpha"}, 2);
  ASSERT_TRUE(started.ok()) << started.error().message;
  std::unique_ptr<SlurmLab> lab = std::move(*started);
  ClusterSpec spec = lab->cluster_spec("alpha");
  spec.slurm.containers = ContainerRuntime::pyxis;
  SlurmSite site(spec, std::make_unique<SshSession>(spec.name, spec.ssh), SlurmSiteOptions{kAgent});

  // The preflight asks the runtime the cluster declares to answer: the stand-in is loaded.
  auto named = [](const std::vector<PreflightCheck>& checks, const std::string& name) {
    for (const auto& c : checks) {
      if (c.name == name) return c;
    }
    return check_skipped(name, "nothing (not listed)");
  };
  PreflightCheck pyxis = named(site.preflight(), "containers");
  EXPECT_TRUE(pyxis.ok && !pyxis.skipped) << pyxis.why;
  ClusterSpec with_apptainer = spec;
  with_apptainer.slurm.containers = ContainerRuntime::apptainer;
  SlurmSite other(with_apptainer, std::make_unique<SshSession>(spec.name, spec.ssh),
                  SlurmSiteOptions{kAgent});
  PreflightCheck apptainer = named(other.preflight(), "containers");
  EXPECT_FALSE(apptainer.ok) << "the lab has no apptainer: " << apptainer.why;

  LaunchRequest r;
  r.token = "orch-42-1-pyxis";
  r.job_id = 42;
  r.attempt_no = 1;
  r.job_name = "ngc";
  r.nodes = 2;
  r.gpus_per_node = 1;
  r.heartbeat_s = 0.5;
  r.heartbeat_timeout_s = 10;
  // Long enough for a few heartbeats; prints what the stand-in gave the task.
  r.command = "sleep 3; echo \"image=$PYXIS_STANDIN_IMAGE rank=$RANK\"";
  r.container.image = "nvcr.io#nvidia/pytorch:24.05-py3";
  r.container.mounts = {{"/tmp", "/tmp", true}};
  r.container.env = {"HF_HOME"};

  auto launched = site.launch(r);
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  std::vector<std::string> lines;
  RunObservation last = observe_until_exited(site, r.token, lines);
  ASSERT_EQ(last.phase, RunPhase::exited) << ::testing::PrintToString(lines);
  ASSERT_TRUE(last.exit.has_value());
  EXPECT_EQ(last.exit->exit_code, 0) << ::testing::PrintToString(lines);
  // Each task's line after its "[node/rank] " tag (a gang's lines are tagged: issue 41).
  EXPECT_THAT(lines,
              Contains(::testing::EndsWith("/0] image=nvcr.io#nvidia/pytorch:24.05-py3 rank=0")));
  EXPECT_THAT(lines,
              Contains(::testing::EndsWith("/1] image=nvcr.io#nvidia/pytorch:24.05-py3 rank=1")));

  // What srun delivered to each task of the tasks' step, as the stand-in recorded it.
  const std::string records = lab->dir() + "/alpha/log/containers";
  int tasks = 0;
  for (const auto& entry : std::filesystem::directory_iterator(records)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(last.site_job_id + ".", 0) != 0) continue;
    ++tasks;
    const std::string record = slurp(entry.path().string());
    EXPECT_THAT(record, HasSubstr("container-image=nvcr.io#nvidia/pytorch:24.05-py3\n"));
    EXPECT_THAT(record, HasSubstr(",/tmp:/tmp:ro\n"));  // the job's mount, after orchestrate's
    EXPECT_THAT(record, HasSubstr("container-mounts=" + spec.storage_root + ":"));
    EXPECT_THAT(record, HasSubstr("container-workdir=" + spec.storage_root + "/runs/" + r.token +
                                  "/work\n"));
    EXPECT_THAT(record, HasSubstr("container-env=HF_HOME\n"));
  }
  EXPECT_EQ(tasks, 2) << "one record per task in " << records;

  // The agents inside wrote heartbeats while the job ran (records every 0.5 s for 3 s).
  for (int rank = 0; rank < 2; ++rank) {
    const std::string events = slurp(spec.storage_root + "/runs/" + r.token + "/tasks/" +
                                     std::to_string(rank) + ".events.jsonl");
    std::size_t beats = 0;
    for (std::size_t at = events.find("heartbeat"); at != std::string::npos;
         at = events.find("heartbeat", at + 1)) {
      ++beats;
    }
    EXPECT_GE(beats, 2u) << "task " << rank << ":\n" << events;
  }
}

}  // namespace
}  // namespace orch::test
