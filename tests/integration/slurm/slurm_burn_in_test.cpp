// Burn-in on real Slurm (issue 4's acceptance): a new three-node cluster is probed through the
// adapter (one srun job, one task per node) before it gets work. One node is made slow, as a
// CPU-bound neighbour would: its slurmd (and so every task it starts) runs at nice 19 while busy
// loops take the CPUs. Burn-in quarantines that node, and the first launch excludes it in the
// sbatch command the job's events record.
#include <string>

#include "tests/integration/slurm/slurm_fixture.h"

namespace orch::e2e {
namespace {

class SlurmBurnInTest : public SlurmE2eTest {
 protected:
  void SetUp() override {
    poll_ = milliseconds(200);
    wait_timeout_ = milliseconds(120000);
    final_timeout_ = milliseconds(120000);
    auto lab = test::SlurmLab::start({"alpha"}, 3);
    ASSERT_TRUE(lab.ok()) << "the Slurm lab did not come up: " << lab.error().message;
    lab_ = std::move(*lab);
    auto slow = lab_->renice_node("alpha", "alpha-n2", 19);
    ASSERT_TRUE(slow.ok()) << slow.error().message;
    auto hog = lab_->start_cpu_hog(120);
    ASSERT_TRUE(hog.ok()) << hog.error().message;
    // The judging threshold is lowered from the default 0.9: the three probes share this
    // machine's CPUs with the busy loops, so the two healthy nodes differ more than separate
    // machines would. The slow node gets a few percent of theirs.
    start_with("clusters:\n" + cluster_yaml("alpha") +
               "    burn_in: {on_join: true, min_compute_ratio: 0.5, min_io_ratio: 0.05, "
               "io_mb: 8, compute_s: 2}\n");
  }
  void before_cleanup() override {
    if (lab_) (void)lab_->stop_cpu_hog();
    SlurmE2eTest::before_cleanup();
  }
};

TEST_F(SlurmBurnInTest, TheSlowNodeIsQuarantinedAndTheFirstLaunchExcludesIt) {
  // Work submitted before the cluster is admitted waits for the burn-in.
  const std::int64_t id = submit(job_yaml("after-burn-in", "--steps 30 --step-delay-ms 10"));
  ASSERT_GT(id, 0);

  const auto deadline = SteadyClock::now() + std::chrono::seconds(120);
  json row;
  while (SteadyClock::now() < deadline) {
    row = cluster_row("alpha");
    if (row.is_object() && row.value("admission", "") == "active") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(row.value("admission", ""), "active") << row.dump();
  (void)lab_->stop_cpu_hog();

  json probes = get_json(url_, "/api/v1/clusters/alpha/probes");
  ASSERT_TRUE(probes.is_object()) << probes.dump();
  ASSERT_EQ(probes["probes"].size(), 3u) << probes.dump(1);
  json nodes = get_json(url_, "/api/v1/nodes?cluster=alpha");
  ASSERT_TRUE(nodes.is_object()) << nodes.dump();
  for (const auto& n : nodes["nodes"]) {
    const std::string want = n["name"] == "alpha-n2" ? "quarantined" : "active";
    EXPECT_EQ(n["state"], want) << n.dump() << "\nprobes: " << probes.dump(1);
  }

  json done = wait_final(id);
  ASSERT_EQ(done["state"], "succeeded") << describe_job(url_, id);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u) << list.dump();
  EXPECT_NE(list[0]["nodes"].dump().find("alpha-n"), std::string::npos) << list.dump();
  EXPECT_EQ(list[0]["nodes"].dump().find("alpha-n2"), std::string::npos) << list.dump();
  std::string submitted;
  for (const auto& e : events(id)) {
    if (e["kind"] == "launched") submitted = e["message"].get<std::string>();
  }
  EXPECT_NE(submitted.find("sbatch"), std::string::npos) << submitted;
  EXPECT_NE(submitted.find("--exclude"), std::string::npos) << submitted;
  EXPECT_NE(submitted.find("alpha-n2"), std::string::npos) << submitted;
}

}  // namespace
}  // namespace orch::e2e
