// Issue 14's acceptance on real Slurm: multi-node gangs on a lab of 4 nodes per cluster with a
// production-like SlurmdTimeout (300 s). A 3-node toy job runs 3 ranks on 3 distinct nodes with
// the launch contract's variables; one of its nodes crashes (slurmd, slurmstepd and tasks
// killed) and the attempt ends node_lost naming it from the heartbeats, long before Slurm
// marks the node down; the job resumes on the same cluster without that node and finishes. A
// 4-node job goes to the other cluster when a node of the first is quarantined.
#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "slurm_fixture.h"

namespace orch::e2e {
namespace {

constexpr double kHeartbeatTimeoutS = 6;

class SlurmGangTest : public SlurmE2eTest {
 protected:
  int nodes_per_cluster() const override { return 4; }
  int slurmd_timeout_s() const override { return 300; }

  // A toy-trainer gang of `nodes` x 1 task, each rank all-reducing every step over TCP.
  static std::string gang_yaml(const std::string& name, int nodes, const std::string& flags,
                               const std::string& allowed) {
    return job_yaml(name, flags + " --collective-timeout-s 60 --rendezvous-timeout-s 60",
                    "health: {heartbeat_timeout_s: " + std::to_string(kHeartbeatTimeoutS) +
                        "}\nplacement: {allowed: [" + allowed + "]}\n",
                    "{interval_steps: 10}", nodes);
  }

  // What each rank printed of its place at start (toy_trainer's describe line), by rank: the
  // whole line, then world, node rank, nodes, local rank, master host, port and node name of
  // "rank R/W node N/NN local L master A:P host H node_name X".
  static std::map<int, std::vector<std::string>> rank_lines(const std::string& output) {
    static const std::regex line(
        "rank ([0-9]+)/([0-9]+) node ([0-9]+)/([0-9]+) local ([0-9]+) master ([^ :]+):([0-9]+) "
        "host [^ ]+ node_name ([^ \n]+)");
    std::map<int, std::vector<std::string>> out;
    for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
         it != std::sregex_iterator(); ++it) {
      std::vector<std::string>& groups = out[std::stoi((*it)[1].str())];
      for (std::size_t k = 0; k < it->size(); ++k) groups.push_back((*it)[k].str());
    }
    return out;
  }

  std::string output_of(const json& attempt) {
    return read_file(lab_->cluster("alpha").storage_root + "/runs/" +
                     attempt["token"].get<std::string>() + "/output.log");
  }
};

TEST_F(SlurmGangTest, ANodeThatDiesIsLostFromHeartbeatsAndTheJobResumesWithoutIt) {
  const std::int64_t id =
      submit(gang_yaml("gang", 3, "--steps 400 --step-delay-ms 40 --ckpt-every 10", "alpha"));
  ASSERT_GT(id, 0);
  json before = wait_job(
      id,
      [](const json& j) {
        return j["state"] == "running" && j["step"].is_number() && j["step"].get<int>() >= 30 &&
               !j["last_checkpoint"].is_null();
      },
      "run past step 30 with a checkpoint");
  ASSERT_FALSE(before.is_null());
  json first = attempts(id).at(0);
  ASSERT_EQ(node_set(first).size(), 3u) << first.dump();

  // Every rank printed its place: 3 ranks on 3 distinct nodes, one rendezvous.
  const std::string text = output_of(first);
  auto ranks = rank_lines(text);
  ASSERT_EQ(ranks.size(), 3u) << text;
  std::set<std::string> rank_nodes, masters;
  for (const auto& [rank, m] : ranks) {
    EXPECT_EQ(m[2], "3") << m[0];                   // world
    EXPECT_EQ(m[3], std::to_string(rank)) << m[0];  // node rank
    EXPECT_EQ(m[4], "3") << m[0];                   // nodes
    EXPECT_EQ(m[5], "0") << m[0];                   // local rank
    masters.insert(m[6] + ":" + m[7]);
    rank_nodes.insert(m[8]);
  }
  EXPECT_EQ(masters.size(), 1u) << text;
  EXPECT_EQ(rank_nodes, node_set(first)) << text;
  const int port = std::stoi(ranks.at(0)[7]);
  EXPECT_GE(port, 20000);
  EXPECT_LT(port, 30000);

  // Rank 2's node crashes: its slurmd, slurmstepd, agent and rank die at once.
  const std::string victim = ranks.at(2)[8];
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(lab_->kill_node("alpha", victim).ok());
  json ended = wait_job(
      id, [&](const json&) { return attempts(id).at(0)["state"] == "exited"; },
      "end attempt 1 after the node died");
  ASSERT_FALSE(ended.is_null());
  const double detected_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  json a1 = attempts(id).at(0);
  EXPECT_EQ(a1["cause"], "node_lost") << a1.dump();
  EXPECT_EQ(a1["failed_node"], victim) << a1.dump();
  // Within heartbeat_timeout_s plus one poll (and the waits' own polling).
  EXPECT_LT(detected_s, kHeartbeatTimeoutS + 4) << describe_job(url_, id);
  // Slurm has not marked the node down yet: that takes SlurmdTimeout (300 s).
  auto state = lab_->node_state("alpha", victim);
  ASSERT_TRUE(state.ok()) << state.error().message;
  EXPECT_EQ(state->find("DOWN"), std::string::npos) << *state;

  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[1]["cluster"], "alpha") << "enough healthy nodes remain on alpha";
  EXPECT_EQ(node_set(list[1]).count(victim), 0u) << list[1].dump();
  EXPECT_EQ(node_set(list[1]).size(), 3u) << list[1].dump();
  ASSERT_FALSE(list[1]["resumed_from"].is_null()) << list.dump();
  EXPECT_GE(list[1]["resumed_from"]["step"].get<int>(), 30) << list[1].dump();
  EXPECT_EQ(list[1]["last_step"], 400);
}

TEST_F(SlurmGangTest, AFourNodeJobGoesElsewhereWhenANodeOfTheFullClusterIsQuarantined) {
  const std::string node = lab_->cluster("alpha").nodes.at(1);
  // A node can be quarantined once its site has listed it.
  ASSERT_TRUE(eventually([&] {
    json nodes = get_json(url_, "/api/v1/nodes?cluster=alpha");
    return nodes.contains("nodes") && nodes["nodes"].size() == 4;
  })) << get_json(url_, "/api/v1/nodes?cluster=alpha").dump();
  expect_full_gang_goes_to_beta(
      node, gang_yaml("wide", 4, "--steps 20 --step-delay-ms 10 --ckpt-every 10", "alpha, beta"),
      4);
}

}  // namespace
}  // namespace orch::e2e
