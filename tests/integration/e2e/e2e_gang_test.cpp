// Multi-node gangs on local sites, against the real server (issue 14's acceptance, local half):
// a 3-node toy job runs 3 ranks on 3 virtual nodes that all-reduce every step; one virtual node
// killed mid-run ends the attempt node_lost naming it, and the job resumes on the same cluster
// without that node from its newest checkpoint and finishes. A 4-node job on a 4-node cluster
// with a quarantined node goes to the other cluster.
#include <signal.h>

#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

// Four virtual nodes of one slot per cluster, so that a gang can lose one and still fit.
class E2eGangTest : public E2eTest {
 protected:
  void SetUp() override { start_with(local_clusters_yaml(4, 1)); }

  // A toy-trainer gang: `nodes` x 1 task, each rank all-reducing every step over TCP.
  std::string gang_yaml(const std::string& name, int nodes, const std::string& flags,
                        const std::string& allowed,
                        const std::string& health = "heartbeat_timeout_s: 3") const {
    return "name: " + name + "\ncommand: " + testkit::job_bin_dir() +
           "/toy_trainer --dim 32 --batch 16 " + flags + " --ckpt-dir \"$ORCH_CHECKPOINT_DIR\"" +
           " --collective-timeout-s 20 --rendezvous-timeout-s 30\n"
           "resources: {nodes: " +
           std::to_string(nodes) +
           ", gpus_per_node: 1}\n"
           "model: {parameters: 1024}\n"
           "checkpoint: {interval_steps: 10}\n"
           "health: {" +
           health +
           "}\n"
           "restart: {max_infra_restarts: 3, backoff: {initial_s: 0.1, max_s: 1}}\n"
           "placement: {allowed: [" +
           allowed + "]}\n";
  }

  // The agent pid of one task of a running attempt on a local site.
  std::optional<pid_t> task_pid(const std::string& site, const std::string& token, int rank) {
    std::string dir = state_ + "/sites/" + site + "/runs/" + token;
    if (rank > 0) dir += "/tasks/" + std::to_string(rank);
    return read_agent_pid(dir);
  }
};

TEST_F(E2eGangTest, AVirtualNodeKilledMidRunIsNodeLostAndTheJobResumesWithoutIt) {
  const std::int64_t id =
      submit(gang_yaml("gang", 3, "--steps 80 --step-delay-ms 20 --ckpt-every 10", "alpha"));
  ASSERT_GT(id, 0);
  ASSERT_FALSE(wait_step(id, 25).is_null());
  json first = attempts(id).at(0);
  EXPECT_EQ(node_set(first), (std::set<std::string>{"alpha-n0", "alpha-n1", "alpha-n2"}))
      << first.dump();
  auto pid = task_pid("alpha", first["token"].get<std::string>(), 2);
  ASSERT_TRUE(pid.has_value()) << describe_run_dirs(state_);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(-*pid, SIGKILL), 0);  // virtual node alpha-n2: its agent and its rank

  json ended = wait_job(
      id, [&](const json&) { return attempts(id).at(0)["state"] == "exited"; }, "end attempt 1");
  ASSERT_FALSE(ended.is_null());
  const double detected_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  json a1 = attempts(id).at(0);
  EXPECT_EQ(a1["cause"], "node_lost") << a1.dump();
  EXPECT_EQ(a1["failed_node"], "alpha-n2") << a1.dump();
  // Within heartbeat_timeout_s (3) plus one poll; a vanished agent is seen at the next poll.
  EXPECT_LT(detected_s, 3.0 + 1.0) << describe_job(url_, id);

  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[1]["cluster"], "alpha") << "enough healthy nodes remain on alpha";
  EXPECT_EQ(node_set(list[1]).count("alpha-n2"), 0u) << list[1].dump();
  EXPECT_EQ(node_set(list[1]).size(), 3u) << list[1].dump();
  EXPECT_GE(list[1]["resumed_from"]["step"].get<int>(), 20) << list[1].dump();
  EXPECT_EQ(list[1]["last_step"], 80);
}

TEST_F(E2eGangTest, AFourNodeJobGoesElsewhereWhenANodeOfTheFullClusterIsQuarantined) {
  expect_full_gang_goes_to_beta(
      "alpha-n1",
      gang_yaml("wide", 4, "--steps 20 --step-delay-ms 5 --ckpt-every 10", "alpha, beta"), 4);
}

TEST_F(E2eGangTest, AGangWhoseRanksDeadlockIsEndedAsHungAndItsNodesAreNotQuarantined) {
  // Every rank but 0 stops taking part at step 30 but stays alive: nothing more is printed.
  const std::int64_t id =
      submit(gang_yaml("deadlock", 2,
                       "--steps 60 --step-delay-ms 10 --ckpt-every 10 --deadlock-at-step 30 "
                       "--fault-attempt 1",
                       "alpha", "heartbeat_timeout_s: 3, hang_after_s: 3"));
  ASSERT_GT(id, 0);
  json done = wait_job(
      id,
      [&](const json&) {
        return attempts(id).size() >= 1 && attempts(id).at(0)["state"] == "exited";
      },
      "end the deadlocked attempt", std::chrono::milliseconds(120'000));
  ASSERT_FALSE(done.is_null());
  json a1 = attempts(id).at(0);
  EXPECT_EQ(a1["cause"], "hang") << a1.dump();
  // A user's deadlock is not the hardware's fault: no node is quarantined and the node ledger
  // holds no failure.
  json nodes = get_json(url_, "/api/v1/nodes?cluster=alpha");
  ASSERT_TRUE(nodes.contains("nodes")) << nodes.dump();
  EXPECT_EQ(nodes["nodes"].size(), 4u) << nodes.dump();
  for (const auto& n : nodes["nodes"]) {
    EXPECT_EQ(n["state"], "active") << n.dump();
  }
  json ledger = get_json(url_, "/api/v1/clusters/alpha/nodes");
  for (const auto& e : ledger["events"]) {
    EXPECT_NE(e["kind"], "node-failure") << e.dump();
  }
  json final_state = wait_final(id);
  EXPECT_EQ(final_state["state"], "succeeded") << describe_job(url_, id);
}

// A gang's log per task (issue 41, item 5): 2 nodes x 2 tasks, each line tagged by its agent
// "[<node>/<rank>] "; `job logs` hides the protocol lines, `--rank 1` shows rank 1's alone,
// `--raw` everything; the job's progress is still read through the tags.
TEST_F(E2eGangTest, AGangsLogIsTaggedByNodeAndRankAndJobLogsFiltersIt) {
  const std::string yaml = "name: tagged\ncommand: " + testkit::job_bin_dir() +
                           "/toy_trainer --dim 32 --batch 16 --steps 30 --step-delay-ms 5 "
                           "--ckpt-every 10 --ckpt-dir \"$ORCH_CHECKPOINT_DIR\" "
                           "--collective-timeout-s 20 --rendezvous-timeout-s 30\n"
                           "resources: {nodes: 2, gpus_per_node: 1, tasks_per_node: 2}\n"
                           "model: {parameters: 1024}\n"
                           "checkpoint: {interval_steps: 10}\n"
                           "placement: {allowed: [alpha]}\n";
  const std::int64_t id = submit(yaml);
  ASSERT_GT(id, 0);
  json done = wait_final(id);
  ASSERT_EQ(done["state"], "succeeded") << describe_job(url_, id);
  EXPECT_EQ(done["step"], 30) << "progress parsed through the tags: " << done.dump();

  ProcessResult all = cli({"job", "logs", std::to_string(id)});
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const std::regex tagged(R"(^\[(alpha-n[0-9]+)/([0-3])\] (.*)$)");
  std::map<int, std::string> node_of;  // rank -> node, as the tags say
  std::istringstream lines(all.output);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, tagged)) << "an untagged line: " << line;
    const int rank = std::stoi(m[2]);
    EXPECT_EQ(node_of.emplace(rank, m[1]).first->second, m[1]) << "rank " << rank << "'s node";
    EXPECT_NE(m[3].str().rfind("@orchestrate ", 0), 0u) << "a protocol line shown: " << line;
  }
  ASSERT_EQ(node_of.size(), 4u) << all.output;
  EXPECT_EQ(node_of[0], node_of[1]) << "ranks 0 and 1 share the first node";
  EXPECT_EQ(node_of[2], node_of[3]);
  EXPECT_NE(node_of[0], node_of[2]);

  ProcessResult one = cli({"job", "logs", std::to_string(id), "--rank", "1"});
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const std::string prefix = "[" + node_of[1] + "/1] ";
  std::istringstream rank_lines(one.output);
  int count = 0;
  for (std::string line; std::getline(rank_lines, line); ++count) {
    EXPECT_EQ(line.rfind(prefix, 0), 0u) << "not rank 1's: " << line;
  }
  EXPECT_GE(count, 30) << one.output;  // a rank-step line a step, at least
  EXPECT_NE(one.output.find("rank-step {\"rank\":1,"), std::string::npos) << one.output;

  ProcessResult raw = cli({"job", "logs", std::to_string(id), "--raw"});
  ASSERT_EQ(raw.exit_code, 0) << raw.output;
  EXPECT_NE(raw.output.find("[" + node_of[0] + "/0] @orchestrate {"), std::string::npos)
      << raw.output;
  EXPECT_EQ(cli({"job", "logs", std::to_string(id), "--rank", "4"}).exit_code, 2);
}

}  // namespace
}  // namespace orch::e2e

namespace orch::e2e {
namespace {

// Hot spares on a local site (issue 38): alpha (4 virtual nodes) keeps one burned in and held by
// a holder process, so a 3-node gang fills it. The gang loses a virtual node; its next attempt
// runs on the two survivors and the spare, and the pool refills once the job is done (the node
// the gang lost waits a minute before it may be a spare; by then the gang's nodes are free).
class E2eSparesTest : public E2eGangTest {
 protected:
  void SetUp() override {
    std::string yaml = local_clusters_yaml(4, 1);
    yaml.replace(yaml.find("nodes: 4"), 8, "nodes: 4, spares: 1");  // alpha's entry comes first
    start_with(yaml);
  }
  json spares() { return cluster_row("alpha")["spares"]; }
  std::string ready_spare() { return E2eGangTest::ready_spare("alpha", milliseconds(60000)); }
};

TEST_F(E2eSparesTest, AGangThatLosesANodeRunsOnItsSurvivorsAndTheSpareAndThePoolRefills) {
  const std::string spare = ready_spare();
  ASSERT_FALSE(spare.empty()) << spares().dump();
  const std::int64_t id =
      submit(gang_yaml("spared", 3, "--steps 80 --step-delay-ms 20 --ckpt-every 10", "alpha"));
  ASSERT_GT(id, 0);
  ASSERT_FALSE(wait_step(id, 25).is_null());
  json first = attempts(id).at(0);
  ASSERT_EQ(node_set(first).size(), 3u) << first.dump();
  EXPECT_EQ(node_set(first).count(spare), 0u) << "no job lands on the spare: " << first.dump();
  auto pid = task_pid("alpha", first["token"].get<std::string>(), 2);
  ASSERT_TRUE(pid.has_value()) << describe_run_dirs(state_);
  const std::string victim = first["nodes"][2].get<std::string>();
  ASSERT_EQ(kill(-*pid, SIGKILL), 0);

  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  std::set<std::string> want = node_set(first);
  want.erase(victim);
  want.insert(spare);
  EXPECT_EQ(node_set(list[1]), want) << list[1].dump();
  EXPECT_EQ(list[1]["last_step"], 80);
  // The pool refills with an idle node that did not just fail.
  const std::string next = ready_spare();
  EXPECT_FALSE(next.empty()) << spares().dump();
  EXPECT_NE(next, victim) << spares().dump();
  EXPECT_EQ(spares()["taken"], 1);
}

}  // namespace
}  // namespace orch::e2e
