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

namespace orch::e2e {
namespace {

// Issue 38's hot spares on real Slurm: alpha (4 nodes) holds one spare, burned in and held by a
// holder job pinned to its node, so a 3-node gang fills the cluster. When one of the gang's
// nodes dies, the next attempt runs at once on the two survivors and the spare (the holder
// cancelled first), and once the dead node is back (and a minute has passed since it failed)
// the pool refills with it, burned in again.
class SlurmSparesTest : public SlurmE2eTest {
 protected:
  int nodes_per_cluster() const override { return 4; }
  int slurmd_timeout_s() const override { return 300; }
  std::string cluster_extra(const std::string& name) const override {
    return name == "alpha" ? "    spares: 1\n" : "";
  }
  json spares() { return cluster_row("alpha")["spares"]; }
  std::string ready_spare() { return SlurmE2eTest::ready_spare("alpha", milliseconds(90000)); }
};

TEST_F(SlurmSparesTest, AGangThatLosesANodeRelaunchesOnItsSurvivorsAndTheSpareWhichRefills) {
  const std::string spare = ready_spare();
  ASSERT_FALSE(spare.empty()) << "no spare ready on alpha: " << spares().dump();
  // The holder is a Slurm job on that node: the cluster is full once a 3-node gang runs.
  auto held = lab_->slurm("alpha", {"squeue", "-h", "-o", "%j %N"});
  ASSERT_TRUE(held.ok()) << held.error().message;
  EXPECT_NE(held->find(spare), std::string::npos) << *held;

  const std::int64_t id =
      submit(job_yaml("spared",
                      "--steps 5000 --step-delay-ms 40 --ckpt-every 10 --collective-timeout-s 60 "
                      "--rendezvous-timeout-s 60",
                      "health: {heartbeat_timeout_s: 6}\nplacement: {allowed: [alpha]}\n",
                      "{interval_steps: 10}", 3));
  ASSERT_GT(id, 0);
  json running = wait_job(
      id,
      [](const json& j) {
        return j["state"] == "running" && j["step"].is_number() && j["step"].get<int>() >= 20 &&
               !j["last_checkpoint"].is_null();
      },
      "run past step 20 with a checkpoint");
  ASSERT_FALSE(running.is_null());
  json first = attempts(id).at(0);
  const auto first_nodes = node_set(first);
  ASSERT_EQ(first_nodes.size(), 3u) << first.dump();
  EXPECT_EQ(first_nodes.count(spare), 0u) << "no job lands on a spare: " << first.dump();

  const std::string victim = *first_nodes.rbegin();
  ASSERT_TRUE(lab_->kill_node("alpha", victim).ok());
  json second = wait_job(
      id,
      [&](const json&) {
        json list = attempts(id);
        return list.size() == 2 && list[1]["state"] == "running";
      },
      "run a second attempt");
  ASSERT_FALSE(second.is_null()) << describe_job(url_, id);
  json a2 = attempts(id).at(1);
  std::set<std::string> want = first_nodes;
  want.erase(victim);
  want.insert(spare);
  EXPECT_EQ(node_set(a2), want) << "the survivors and the spare: " << a2.dump();
  bool said = false;
  for (const auto& e : events(id)) {
    said |= e.value("kind", "") == "placed" &&
            e.value("message", "").find("on hot spare " + spare) != std::string::npos;
  }
  EXPECT_TRUE(said) << describe_job(url_, id);

  // The dead node returns: a minute after its failure it is burned in and becomes the next
  // spare (the gang, still running, holds the others).
  ASSERT_TRUE(lab_->restart_node("alpha", victim).ok());
  EXPECT_EQ(ready_spare(), victim) << spares().dump();
  json s = spares();
  EXPECT_EQ(s["taken"], 1) << s.dump();
  EXPECT_EQ(s["failed_burn_in"], 0) << s.dump();
  EXPECT_GT(s["gpu_hours_idle"].get<double>(), 0.0) << s.dump();
  EXPECT_EQ(attempts(id).size(), 2u) << describe_job(url_, id);
  call(url_, "POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel");
  EXPECT_EQ(wait_final(id)["state"], "cancelled") << describe_job(url_, id);
}

}  // namespace
}  // namespace orch::e2e
