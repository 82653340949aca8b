// Issue 43's acceptance on real Slurm: the live watch. A 3-node toy gang runs on a 4-node lab
// cluster whose nodes each follow a kernel-log file of their own on the shared filesystem
// (live_watch.kernel_log with {node}). The test appends a fatal Xid line to one node's file
// mid-run: the attempt ends gpu_xid naming that node and the GPU within 10 s of the line, the
// node's ledger counts the fault and the node is quarantined, and the job resumes on the other
// three nodes and finishes.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gmock/gmock.h>

#include "slurm_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

class SlurmGpuWatchTest : public SlurmE2eTest {
 protected:
  int nodes_per_cluster() const override { return 4; }
  int slurmd_timeout_s() const override { return 300; }
  std::string kmsg_dir() const { return lab_->cluster("alpha").storage_root + "/kmsg"; }
  // A stand-in nvidia-smi that answers the watch's query for one GPU, index 3 at PCI 3b:00.
  std::string smi() const { return kmsg_dir() + "/nvidia-smi"; }
  void before_start() override {
    std::filesystem::create_directories(kmsg_dir());
    std::ofstream(smi()) << "#!/bin/sh\necho '3, 00000000:3B:00.0, 0, 44, 301.5, 0x0'\n";
    std::filesystem::permissions(smi(), std::filesystem::perms::owner_all |
                                            std::filesystem::perms::group_read |
                                            std::filesystem::perms::group_exec |
                                            std::filesystem::perms::others_read |
                                            std::filesystem::perms::others_exec);
  }
  std::string cluster_extra(const std::string& name) const override {
    if (name != "alpha") return "";
    return "    live_watch: {watch_s: 1, kernel_log: \"" + kmsg_dir() +
           "/{node}.log\", nvidia_smi: \"" + smi() + "\", gpu_sample_s: 5}\n";
  }
  json node_row(const std::string& name) {
    json list = get_json(url_, "/api/v1/nodes?cluster=alpha");
    for (const auto& n : list.value("nodes", json::array())) {
      if (n["name"] == name) return n;
    }
    return json();
  }
};

TEST_F(SlurmGpuWatchTest, AFatalXidMidRunEndsTheAttemptOnItsNodeAndTheJobResumesWithoutIt) {
  const std::int64_t id = submit(job_yaml(
      "xid",
      "--steps 400 --step-delay-ms 40 --ckpt-every 10 --collective-timeout-s 60 "
      "--rendezvous-timeout-s 60",
      "health: {heartbeat_timeout_s: 6}\nplacement: {allowed: [alpha]}\n", "{interval_steps: 10}",
      3));
  ASSERT_GT(id, 0);
  json running = wait_job(
      id,
      [](const json& j) {
        return j["state"] == "running" && j["step"].is_number() && j["step"].get<int>() >= 30 &&
               !j["last_checkpoint"].is_null();
      },
      "run past step 30 with a checkpoint");
  ASSERT_FALSE(running.is_null());
  json first = attempts(id).at(0);
  const std::set<std::string> nodes = node_set(first);
  ASSERT_EQ(nodes.size(), 3u) << first.dump();
  const std::string victim = *nodes.rbegin();

  // The node's kernel logs a GPU falling off the bus.
  {
    std::ofstream log(kmsg_dir() + "/" + victim + ".log", std::ios::app);
    log << "[ 4242.001] NVRM: Xid (PCI:0000:3b:00): 79, pid=31337, name=python3, GPU has fallen "
           "off the bus.\n";
  }
  const auto wrote = std::chrono::steady_clock::now();
  json ended = wait_job(
      id, [&](const json&) { return attempts(id).at(0)["state"] == "exited"; },
      "end attempt 1 after the Xid");
  ASSERT_FALSE(ended.is_null());
  const double detected_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wrote).count();
  json a1 = attempts(id).at(0);
  EXPECT_EQ(a1["cause"], "gpu_xid") << a1.dump();
  EXPECT_EQ(a1["failed_node"], victim) << a1.dump();
  EXPECT_LT(detected_s, 10.0) << describe_job(url_, id);
  RecordProperty("detected_s", std::to_string(detected_s));
  EXPECT_THAT(describe_job(url_, id), HasSubstr("Xid 79 on GPU 3 (PCI 0000:3b:00)"));

  // The node's ledger counts it, and one such fault takes it out of service.
  ASSERT_TRUE(eventually([&] { return node_row(victim).value("state", "") == "quarantined"; }))
      << node_row(victim).dump();
  EXPECT_GE(node_row(victim).value("failures", 0), 1) << node_row(victim).dump();

  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[1]["cluster"], "alpha");
  EXPECT_EQ(node_set(list[1]).count(victim), 0u) << list[1].dump();
  EXPECT_EQ(node_set(list[1]).size(), 3u) << list[1].dump();
  ASSERT_FALSE(list[1]["resumed_from"].is_null()) << list.dump();
  EXPECT_EQ(list[1]["last_step"], 400);
}

}  // namespace
}  // namespace orch::e2e
