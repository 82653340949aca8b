// Clusters as living things (issue 15) through the real server and the `orchestrate` CLI, with
// two local sites and no restart: a drained cluster gets no new attempt and its running job
// moves at its next checkpoint; a retired one moves its job at once and never comes back.
#include <gmock/gmock.h>

#include <csignal>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

class ClusterAdmissionE2eTest : public E2eTest {
 protected:
  std::string admission(const std::string& cluster) {
    const json list = get_json(url_, "/api/v1/clusters");
    for (const auto& c : list["clusters"]) {
      if (c["name"] == cluster) return c.value("admission", "");
    }
    return "";
  }
  // Waits until the job's attempt `no` runs; returns it.
  json running_attempt(std::int64_t id, std::size_t no) {
    json found;
    eventually([&] {
      const json list = attempts(id);
      if (list.size() < no || list[no - 1]["state"] != "running") return false;
      found = list[no - 1];
      return true;
    });
    return found;
  }
};

TEST_F(ClusterAdmissionE2eTest, DrainMovesAtTheNextCheckpointAndRetireMovesAtOnce) {
  const std::int64_t id = submit(job_yaml("mover", "--steps 400 --step-delay-ms 50 --ckpt-every 10",
                                          "placement: {preferred: [alpha]}\n" + restart_yaml(0)));
  ASSERT_FALSE(wait_step(id, 15).is_null());
  ASSERT_EQ(attempts(id)[0]["cluster"], "alpha");

  ProcessResult drained = cli({"cluster", "drain", "alpha", "--reason", "maintenance"});
  ASSERT_EQ(drained.exit_code, 0) << drained.output;
  EXPECT_THAT(drained.output, HasSubstr("cluster alpha is draining"));
  EXPECT_EQ(admission("alpha"), "draining");
  const int at_drain = job(id)["step"].get<int>();

  // A new job that prefers alpha gets beta.
  const std::int64_t fresh =
      submit(job_yaml("fresh", "--steps 30 --step-delay-ms 20 --ckpt-every 10",
                      "placement: {preferred: [alpha]}\n"));
  json fresh_first = running_attempt(fresh, 1);
  ASSERT_FALSE(fresh_first.is_null()) << describe_job(url_, fresh);
  EXPECT_EQ(fresh_first["cluster"], "beta");

  // The running job moves to beta from a checkpoint saved after the drain, spending no restart.
  json moved = running_attempt(id, 2);
  ASSERT_FALSE(moved.is_null()) << describe_job(url_, id);
  EXPECT_EQ(moved["cluster"], "beta");
  ASSERT_FALSE(moved["resumed_from"].is_null()) << describe_job(url_, id);
  EXPECT_GE(moved["resumed_from"]["step"].get<int>(), at_drain);
  const json first = attempts(id)[0];
  EXPECT_EQ(first["cause"], "cancelled") << first.dump();
  EXPECT_EQ(job(id)["infra_restarts"], 0);

  // Alpha back in service; beta retired: the job moves back at once.
  ASSERT_EQ(cli({"cluster", "activate", "alpha"}).exit_code, 0);
  ProcessResult retired = cli({"cluster", "retire", "beta", "--reason", "contract ended"});
  ASSERT_EQ(retired.exit_code, 0) << retired.output;
  EXPECT_EQ(admission("beta"), "retired");
  json back = running_attempt(id, 3);
  ASSERT_FALSE(back.is_null()) << describe_job(url_, id);
  EXPECT_EQ(back["cluster"], "alpha");
  ProcessResult again = cli({"cluster", "activate", "beta"});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.output, HasSubstr("a retired cluster does not come back"));

  json done = wait_final(id);
  EXPECT_EQ(done["state"], "succeeded") << describe_job(url_, id);
  EXPECT_EQ(done["step"], 400);
  EXPECT_EQ(wait_final(fresh)["state"], "succeeded") << describe_job(url_, fresh);
}

// The clusters file read again without a restart: an invalid file changes nothing and says
// where and why; a cluster taken out of the file drains (SIGHUP does the same as the command);
// a new one joins at once and takes a job.
TEST_F(ClusterAdmissionE2eTest, AReloadDrainsWhatTheFileNoLongerHasAndRefusesABadFile) {
  write_file(config_, "clusters:\n  - name: alpha\n    nodes: zero\n");
  ProcessResult bad = cli({"cluster", "reload"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output, HasSubstr("the clusters file was not reloaded, nothing changed: "));
  EXPECT_THAT(bad.output, HasSubstr("clusters.yaml:3:12: \"nodes\" must be an integer"));
  EXPECT_EQ(admission("alpha"), "active");
  EXPECT_EQ(admission("beta"), "active");

  std::string without_beta = local_clusters_yaml(2, 2);
  without_beta = without_beta.substr(0, without_beta.find("  - {name: beta"));
  without_beta += "  - {name: gamma, provider: local, nodes: 1, gpus_per_node: 2" +
                  testkit::local_run_as_yaml() + "}\n";
  write_file(config_, without_beta);
  ASSERT_EQ(::kill(server_->pid(), SIGHUP), 0);
  ASSERT_TRUE(eventually([&] { return admission("beta") == "draining"; }, milliseconds(10000)));
  EXPECT_EQ(admission("alpha"), "active");
  EXPECT_EQ(admission("gamma"), "active") << "the new cluster joined";
  const std::int64_t id = submit(
      job_yaml("on-gamma", "--steps 20 --step-delay-ms 10", "placement: {allowed: [gamma]}\n"));
  json done = succeeded_attempts(id);
  ASSERT_FALSE(done.is_null());
  EXPECT_EQ(done[0]["cluster"], "gamma");

  ProcessResult again = cli({"cluster", "reload"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("no longer in the file, draining: beta"));
  EXPECT_THAT(again.output, ::testing::Not(HasSubstr("joined"))) << "gamma joined once";
}

// `orchestrate cluster add FILE`: a cluster from a document joins the running server, takes a
// job at once, and is still there after a restart; a bad document or a taken name changes
// nothing and says why.
TEST_F(ClusterAdmissionE2eTest, AnAddedClusterTakesWorkAtOnceAndOutlivesARestart) {
  const std::string bad = dir_->path() + "/bad.yaml";
  write_file(bad, "clusters:\n  - {name: gamma, provider: local, nodes: -1}\n");
  ProcessResult refused = cli({"cluster", "add", bad});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("no cluster was added: " + bad + ":2:"));
  EXPECT_EQ(admission("gamma"), "");

  const std::string taken = dir_->path() + "/taken.yaml";
  write_file(taken, "clusters:\n  - {name: beta, provider: local, nodes: 1, gpus_per_node: 2" +
                        testkit::local_run_as_yaml() + "}\n");
  ProcessResult conflict = cli({"cluster", "add", taken});
  EXPECT_NE(conflict.exit_code, 0);
  EXPECT_THAT(conflict.output, HasSubstr("cluster \"beta\" is already configured"));

  const std::string gamma = dir_->path() + "/gamma.yaml";
  write_file(gamma,
             "clusters:\n  - {name: gamma, provider: local, nodes: 1, gpus_per_node: 2,\n"
             "     accelerator: cpu-slot, unreachable_grace_s: 1, poll_interval_ms: 50" +
                 testkit::local_run_as_yaml() + "}\n");
  ProcessResult added = cli({"cluster", "add", gamma});
  ASSERT_EQ(added.exit_code, 0) << added.output;
  EXPECT_THAT(added.output, HasSubstr("joined: gamma (active)"));
  EXPECT_EQ(admission("gamma"), "active");
  const std::string spec =
      job_yaml("on-gamma", "--steps 20 --step-delay-ms 10", "placement: {allowed: [gamma]}\n");
  json done = succeeded_attempts(submit(spec));
  ASSERT_FALSE(done.is_null());
  EXPECT_EQ(done[0]["cluster"], "gamma");

  // A restart on the same clusters file still knows gamma, and runs work there.
  server_->stop();
  start_server();
  EXPECT_EQ(admission("gamma"), "active");
  json after = succeeded_attempts(submit(spec));
  ASSERT_FALSE(after.is_null());
  EXPECT_EQ(after[0]["cluster"], "gamma");
  // A reload does not drain it: it was never in the file.
  ProcessResult reload = cli({"cluster", "reload"});
  ASSERT_EQ(reload.exit_code, 0) << reload.output;
  EXPECT_THAT(reload.output, HasSubstr("no cluster added or removed"));
  EXPECT_EQ(admission("gamma"), "active");
}

}  // namespace
}  // namespace orch::e2e
