// Tiered checkpoints on the real server (issue 38, item 4), with the real PyTorch trainer of
// examples/pytorch/train.py saving as docs/progress-protocol.md tells users to: each save goes to
// the node's own disk ($ORCH_LOCAL_CHECKPOINT_DIR, the blocking part) and is drained to the
// shared directory in the background. Cluster alpha's two virtual nodes each have a directory of
// their own (storage.node_local with "{node}").
//
//   - The node survives (the training process alone is killed): the next attempt starts on that
//     node and resumes from its own copy of the newest checkpoint.
//   - The node dies (its agent and the job frozen, so its heartbeats stop) while the newest save
//     is still draining (the drain is capped at a few KB/s): that node's copies are marked lost,
//     though the files are still there, and the next attempt resumes on the other node from the
//     newest checkpoint whose shared copy was whole (the one drained, never the one mid-drain).
//
// Skipped where PyTorch is not installed (`make test` installs Debian's python3-torch).
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;

bool have_torch() {
  return run_process({"/usr/bin/python3", "-c", "import torch"}, milliseconds(60000)).exit_code ==
         0;
}

// The newest step among the job's checkpoints with a copy of this tier ("node" or "site") in
// one of these states; -1 when none.
int newest_step_with(const json& checkpoints, const std::string& tier,
                     const std::set<std::string>& states) {
  int best = -1;
  for (const auto& c : checkpoints) {
    for (const auto& r : c["replicas"]) {
      if (r.value("tier", "") == tier && states.count(r.value("state", "")) != 0) {
        best = std::max(best, c["step"].get<int>());
      }
    }
  }
  return best;
}

class E2eTieredCheckpointTest : public E2eTest {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>();
    testkit::open_to_jobs(dir_->path());
    state_ = dir_->path() + "/state";
    config_ = dir_->path() + "/clusters.yaml";
    disks_ = dir_->path() + "/node-disks";
    write_file(config_,
               "clusters:\n"
               "  - {name: alpha, provider: local, nodes: 2, gpus_per_node: 1, "
               "accelerator: cpu-slot,\n"
               "     unreachable_grace_s: 1, poll_interval_ms: 50,\n"
               "     storage: {node_local: \"" +
                   disks_ + "/{node}\"}" + testkit::local_run_as_yaml() + "}\n");
    start_server();
    script_ = dir_->path() + "/train.py";
    fs::copy_file(ORCH_SOURCE_DIR "/examples/pytorch/train.py", script_);
    fs::permissions(script_, fs::perms::owner_read | fs::perms::owner_write |
                                 fs::perms::group_read | fs::perms::others_read);
  }

  std::int64_t submit_trainer(const std::string& env) {
    return submit(
        "name: tiered\n"
        "command: /usr/bin/python3 " +
        script_ +
        " --steps 400 --ckpt-every 10 --step-delay-s 0.05\n"
        "resources: {nodes: 1, gpus_per_node: 1}\n"
        "model: {parameters: 4160}\n"
        "checkpoint: {interval_steps: 10}\n"
        "health: {heartbeat_timeout_s: 3}\n" +
        env + restart_yaml(2));
  }
  json checkpoints(std::int64_t id) {
    json c = get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/checkpoints");
    return c.is_object() ? c["checkpoints"] : json::array();
  }
  std::string run_dir(const json& attempt) const {
    return state_ + "/sites/alpha/runs/" + attempt["token"].get<std::string>();
  }
  std::string disks_;
  std::string script_;
};

TEST_F(E2eTieredCheckpointTest, ASurvivingNodeResumesFromItsOwnCopy) {
  if (!have_torch()) GTEST_SKIP() << "PyTorch is not installed (Debian's python3-torch)";
  const std::int64_t id = submit_trainer("");
  ASSERT_GT(id, 0);
  int local_step = -1;
  ASSERT_TRUE(eventually([&] {
    local_step = newest_step_with(checkpoints(id), "node", {"verified"});
    return local_step >= 20;
  })) << describe_job(url_, id);
  json first = attempts(id).at(0);
  const std::string node = first["nodes"].at(0);
  // The training process only (as an OOM kill would): the agent and the node stay up.
  auto agent = read_agent_pid(run_dir(first));
  ASSERT_TRUE(agent.has_value());
  const std::string children = read_file("/proc/" + std::to_string(*agent) + "/task/" +
                                         std::to_string(*agent) + "/children");
  ASSERT_FALSE(children.empty()) << "the agent has no child";
  local_step = newest_step_with(checkpoints(id), "node", {"verified"});
  ASSERT_EQ(kill(std::stoi(children), SIGKILL), 0);

  ASSERT_TRUE(eventually([&] {
    json list = attempts(id);
    return list.size() >= 2 && list[1]["resumed_from"].is_object() && !list[1]["nodes"].empty();
  })) << describe_job(url_, id);
  json second = attempts(id).at(1);
  EXPECT_EQ(second["nodes"].at(0), node) << second.dump();
  const std::string own_dir = disks_ + "/" + node + "/job-" + std::to_string(id) + "/";
  const std::string from = second["resumed_from"]["path"];
  EXPECT_EQ(from.rfind(own_dir, 0), 0u) << "resumed from " << from << ", not the node's copy";
  EXPECT_GE(second["resumed_from"]["step"].get<int>(), local_step) << second.dump();
  ASSERT_EQ(call(url_, "POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel").status, 202);
}

TEST_F(E2eTieredCheckpointTest, ALostNodesCopiesAreNeverUsedAndTheDrainedSharedCopyIs) {
  if (!have_torch()) GTEST_SKIP() << "PyTorch is not installed (Debian's python3-torch)";
  // ~20 KB checkpoints drained at 5 KB/s: a save every half second, a drain every 4 s, so the
  // newest save is always on the node only.
  const std::int64_t id = submit_trainer("env: {ORCH_DRAIN_BYTES_PER_S: \"5000\"}\n");
  ASSERT_GT(id, 0);
  int drained = -1;
  int saved = -1;
  ASSERT_TRUE(eventually(
      [&] {
        json c = checkpoints(id);
        drained = newest_step_with(c, "site", {"verified"});
        saved = newest_step_with(c, "node", {"verified", "present"});
        return drained >= 10 && saved > drained;
      },
      milliseconds(120000)))
      << describe_job(url_, id);
  json first = attempts(id).at(0);
  const std::string node = first["nodes"].at(0);
  auto agent = read_agent_pid(run_dir(first));
  ASSERT_TRUE(agent.has_value());
  // The node hangs: its agent and the job stop dead, heartbeats and the drain with them.
  ASSERT_EQ(kill(-*agent, SIGSTOP), 0);

  ASSERT_TRUE(eventually([&] {
    json list = attempts(id);
    return list.size() >= 2 && list[1]["resumed_from"].is_object() && !list[1]["nodes"].empty();
  })) << describe_job(url_, id);
  json a1 = attempts(id).at(0);
  EXPECT_EQ(a1["cause"], "node_lost") << a1.dump();
  json second = attempts(id).at(1);
  EXPECT_NE(second["nodes"].at(0), node) << second.dump();
  // The newest whole shared copy when the node died (a drain cut short was never reported).
  json c = checkpoints(id);
  const int expected = newest_step_with(c, "site", {"verified", "present"});
  EXPECT_GE(expected, drained);
  EXPECT_EQ(second["resumed_from"]["step"].get<int>(), expected) << c.dump();
  const std::string from = second["resumed_from"]["path"];
  EXPECT_EQ(from.find(disks_), std::string::npos) << "resumed from a node's copy: " << from;
  // The lost node's copies: still on its (simulated) disk, but marked missing for good.
  int lost = 0;
  for (const auto& ckpt : c) {
    for (const auto& r : ckpt["replicas"]) {
      if (r.value("node", json()) != node) continue;
      if (r["state"] == "deleted") continue;
      EXPECT_EQ(r["state"], "missing") << r.dump();
      EXPECT_NE(r.value("detail", "").find("lost with node " + node), std::string::npos)
          << r.dump();
      lost += fs::exists(r["path"].get<std::string>()) ? 1 : 0;
    }
  }
  EXPECT_GE(lost, 1) << "the newest save should still lie on the dead node's disk";
  ASSERT_EQ(call(url_, "POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel").status, 202);
}

}  // namespace
}  // namespace orch::e2e
