// Issue 15's lemon on real Slurm: a node that dies under each job it gets is quarantined after
// its second failure (two jobs killed, however close in time) and receives no further attempt;
// `node list` shows its counts and reason, and the scorecard's detection and recovery agree with
// the times this test measures around the kills.
#include <gmock/gmock.h>

#include <algorithm>
#include <chrono>

#include "tests/integration/slurm/slurm_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class SlurmLemonTest : public SlurmE2eTest {
 protected:
  int nodes_per_cluster() const override { return 2; }
  std::string cluster_extra(const std::string& name) const override {
    (void)name;
    return "    quarantine: {failures: 2, window_h: 168}\n";
  }
  // A long toy-trainer job on alpha that takes a whole node (all 8 of its GPUs).
  static std::string node_job(const std::string& name) {
    std::string yaml = job_yaml(name, "--steps 100000 --step-delay-ms 50 --ckpt-every 20",
                                "placement: {allowed: [alpha]}\n");
    const std::string two = "gpus_per_node: 2";
    yaml.replace(yaml.find(two), two.size(), "gpus_per_node: 8");
    return yaml;
  }
  json node_row(const std::string& name) {
    json list = get_json(url_, "/api/v1/nodes?cluster=alpha");
    for (const auto& n : list.value("nodes", json::array())) {
      if (n["name"] == name) return n;
    }
    return json();
  }
  // Waits until attempt `no` of the job is running (its nodes named); returns it.
  json wait_attempt_running(std::int64_t id, std::size_t no) {
    json found;
    eventually([&] {
      json list = attempts(id);
      if (list.size() < no) return false;
      const json& a = list[no - 1];
      if (a["state"] != "running" || a["nodes"].empty()) return false;
      found = a;
      return true;
    });
    return found;
  }
  // Waits until attempt `no` has ended; returns it with the test's clock when it saw the end.
  std::pair<json, std::int64_t> wait_attempt_ended(std::int64_t id, std::size_t no) {
    json found;
    eventually([&] {
      json list = attempts(id);
      if (list.size() < no || list[no - 1]["state"] != "exited") return false;
      found = list[no - 1];
      return true;
    });
    return {found, now_ms()};
  }
};

TEST_F(SlurmLemonTest, ANodeThatKillsEachJobIsQuarantinedAfterItsSecondFailure) {
  // The first job lands on one node: that node is the lemon.
  const std::int64_t first = submit(node_job("lemon-a"));
  json a1 = wait_attempt_running(first, 1);
  ASSERT_FALSE(a1.is_null()) << describe_job(url_, first);
  ASSERT_TRUE(wait_running_on(first, "alpha", 5).is_object());
  const std::string lemon = a1["nodes"][0];
  const auto& names = lab_->cluster("alpha").nodes;
  const std::string good = names.at(0) == lemon ? names.at(1) : names.at(0);

  const std::int64_t killed_1 = now_ms();
  ASSERT_TRUE(lab_->kill_node("alpha", lemon).ok());
  auto [ended_1, seen_end_1] = wait_attempt_ended(first, 1);
  ASSERT_FALSE(ended_1.is_null()) << describe_job(url_, first);
  EXPECT_EQ(ended_1["cause"], "node_lost") << ended_1.dump();
  json a2 = wait_attempt_running(first, 2);  // the retry, on the good node
  const std::int64_t seen_run_2 = now_ms();
  ASSERT_FALSE(a2.is_null()) << describe_job(url_, first);
  EXPECT_EQ(a2["nodes"][0], good);

  ASSERT_TRUE(lab_->restart_node("alpha", lemon).ok());
  ASSERT_TRUE(eventually([&] { return node_row(lemon).value("healthy", false); }))
      << node_row(lemon).dump();
  json after_one = node_row(lemon);
  EXPECT_EQ(after_one["state"], "active");
  EXPECT_EQ(after_one["failures"], 1) << after_one.dump();
  EXPECT_EQ(after_one["next_failure"], "the next failure quarantines it");

  // A second job a little later: the good node is busy, so it gets the lemon, which dies too.
  const std::int64_t second = submit(node_job("lemon-b"));
  json b1 = wait_attempt_running(second, 1);
  ASSERT_FALSE(b1.is_null()) << describe_job(url_, second);
  ASSERT_EQ(b1["nodes"][0], lemon);
  const std::int64_t killed_2 = now_ms();
  ASSERT_TRUE(lab_->kill_node("alpha", lemon).ok());
  auto [ended_2, seen_end_2] = wait_attempt_ended(second, 1);
  ASSERT_FALSE(ended_2.is_null());
  EXPECT_EQ(ended_2["cause"], "node_lost");

  ASSERT_TRUE(eventually([&] { return node_row(lemon).value("state", "") == "quarantined"; }))
      << node_row(lemon).dump();
  json out = node_row(lemon);
  EXPECT_EQ(out["failures"], 2) << out.dump();
  EXPECT_THAT(out["state_reason"].get<std::string>(), HasSubstr("2 failures within 7 days"));
  ProcessResult list = cli({"node", "list", "--cluster", "alpha"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  std::string lemon_line;
  for (std::size_t at = 0; at < list.output.size();) {
    std::size_t nl = list.output.find('\n', at);
    if (nl == std::string::npos) nl = list.output.size();
    const std::string line = list.output.substr(at, nl - at);
    if (line.find(" " + lemon + " ") != std::string::npos) lemon_line = line;
    at = nl + 1;
  }
  EXPECT_THAT(lemon_line, HasSubstr("quarantined")) << list.output;
  EXPECT_THAT(lemon_line, HasSubstr("2/2")) << list.output;
  EXPECT_THAT(lemon_line, HasSubstr("2 failures within 7 days")) << list.output;

  // The lemon is back up in Slurm's eyes, but no attempt lands on it: the second job waits for
  // the good node, and runs there once the first job is cancelled.
  ASSERT_TRUE(lab_->restart_node("alpha", lemon).ok());
  ASSERT_TRUE(eventually([&] { return node_row(lemon).value("healthy", false); }));
  call(url_, "POST", "/api/v1/jobs/" + std::to_string(first) + "/cancel");
  json b2 = wait_attempt_running(second, 2);
  const std::int64_t seen_run_b2 = now_ms();
  ASSERT_FALSE(b2.is_null()) << describe_job(url_, second);
  EXPECT_EQ(b2["nodes"][0], good);
  for (std::int64_t id : {first, second}) {  // every attempt after each job's first
    json list_now = attempts(id);
    for (std::size_t i = 1; i < list_now.size(); ++i) {
      EXPECT_EQ(list_now[i]["nodes"].dump().find("\"" + lemon + "\""), std::string::npos)
          << "an attempt after the quarantine on the lemon: " << list_now.dump();
    }
  }

  // The scorecard's restart figures are the attempts' own times, and those agree with what this
  // test measured: detection from the kill (the last progress line was at most a poll or two
  // before it) to the attempt seen ended; recovery from there to the next attempt seen running.
  json card;
  const json report = get_json(url_, "/api/v1/reports/providers");
  for (const auto& c : report["cards"]) {
    if (c["name"] == "alpha") card = c;
  }
  ASSERT_TRUE(card.is_object()) << report.dump();
  const json e1 = attempts(first)[0];
  const json e2 = attempts(second)[0];
  const json r1 = attempts(first)[1];
  const json r2 = attempts(second)[1];
  auto secs = [](const json& later, const json& earlier) {
    return static_cast<double>(later.get<std::int64_t>() - earlier.get<std::int64_t>()) / 1000.0;
  };
  const double detect_1 = secs(e1["ended_ms"], e1["last_alive_ms"]);
  const double detect_2 = secs(e2["ended_ms"], e2["last_alive_ms"]);
  const double recover_1 = secs(r1["running_ms"], e1["ended_ms"]);
  const double recover_2 = secs(r2["running_ms"], e2["ended_ms"]);
  EXPECT_NEAR(card["detection_median_s"].get<double>(), (detect_1 + detect_2) / 2, 0.01)
      << card.dump();
  EXPECT_NEAR(card["recovery_median_s"].get<double>(), (recover_1 + recover_2) / 2, 0.01)
      << card.dump();
  EXPECT_NEAR(card["detection_p95_s"].get<double>(), std::max(detect_1, detect_2), 0.01);
  const double measured_detect_1 = static_cast<double>(seen_end_1 - killed_1) / 1000.0;
  const double measured_detect_2 = static_cast<double>(seen_end_2 - killed_2) / 1000.0;
  const double measured_recover_1 = static_cast<double>(seen_run_2 - seen_end_1) / 1000.0;
  const double measured_recover_2 = static_cast<double>(seen_run_b2 - seen_end_2) / 1000.0;
  // Against the test's own clock (the same machine's). The brain's verdict comes before the
  // test sees it, and its last sign of life is the last progress line it read: printed at most a
  // poll (200 ms) before the kill, or read by the first poll after it, which under a loaded
  // machine may take a few seconds over SSH. So detection is at most the test's kill-to-seen
  // time (plus the poll) and at least the kill-to-verdict time less that poll's latency.
  const double true_detect_1 = secs(e1["ended_ms"], json(killed_1));
  const double true_detect_2 = secs(e2["ended_ms"], json(killed_2));
  EXPECT_LE(detect_1, measured_detect_1 + 1.0) << e1.dump();
  EXPECT_LE(detect_2, measured_detect_2 + 1.0) << e2.dump();
  EXPECT_GE(detect_1, true_detect_1 - 6.0) << e1.dump();
  EXPECT_GE(detect_2, true_detect_2 - 6.0) << e2.dump();
  // Recovery's two ends are both seen a test poll late: the differences agree closely.
  EXPECT_NEAR(recover_1, measured_recover_1, 3.0) << r1.dump();
  EXPECT_NEAR(recover_2, measured_recover_2, 3.0) << r2.dump();
  std::cerr << "measured: detection " << measured_detect_1 << " s, " << measured_detect_2
            << " s; recovery " << measured_recover_1 << " s, " << measured_recover_2
            << " s; scorecard: " << card.dump() << "\n";
  call(url_, "POST", "/api/v1/jobs/" + std::to_string(second) + "/cancel");
}

}  // namespace
}  // namespace orch::e2e
