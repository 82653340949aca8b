// End-to-end job lifecycles against a real `orchestrate serve` with two local sites: success,
// failover after a site outage with resume from the newest checkpoint, user errors, cancel.
#include <algorithm>
#include <string>
#include <thread>

#include "e2e_fixture.h"

namespace orch::e2e {
namespace {

TEST_F(E2eTest, HappyPathSucceedsWithOneAttempt) {
  const std::int64_t id = submit(job_yaml("happy", "--steps 40 --step-delay-ms 10"));
  ASSERT_GT(id, 0);
  json j = wait_final(id);
  ASSERT_FALSE(j.is_null());
  ASSERT_EQ(j["state"], "succeeded") << describe_job(url_, id);
  EXPECT_EQ(j["step"], 40);

  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u) << describe_job(url_, id);
  const json& a = list[0];
  EXPECT_EQ(a["cause"], "succeeded");
  EXPECT_EQ(a["state"], "exited");
  EXPECT_EQ(a["last_step"], 40);
  EXPECT_EQ(a["exit_code"], 0);
  ASSERT_TRUE(a["mfu"].is_number()) << a.dump();
  EXPECT_GT(a["mfu"].get<double>(), 0.0);
  EXPECT_LE(a["mfu"].get<double>(), 1.0);

  json jobs = get_json(url_, "/api/v1/jobs");
  ASSERT_TRUE(jobs.is_object());
  ASSERT_EQ(jobs["jobs"].size(), 1u) << jobs.dump();
  EXPECT_EQ(jobs["jobs"][0]["id"], id);
  EXPECT_EQ(jobs["jobs"][0]["name"], "happy");
  json done = get_json(url_, "/api/v1/jobs?state=succeeded");
  ASSERT_TRUE(done.is_object());
  EXPECT_EQ(done["jobs"].size(), 1u);

  HttpResponse logs = call(url_, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs");
  EXPECT_EQ(logs.status, 200) << logs.body;
  EXPECT_NE(logs.body.find("@orchestrate"), std::string::npos) << logs.body;
  EXPECT_NE(logs.body.find("\"step\":40"), std::string::npos) << logs.body;
}

// The issue's acceptance: a job checkpointing every 10 steps loses its site part-way, resumes
// on the other site from the newest checkpoint it holds (replicated there, issue 5), and
// succeeds.
TEST_F(E2eTest, SiteOutageResumesOnOtherSiteFromNewestCheckpoint) {
  const std::int64_t id =
      submit(job_yaml("failover", "--steps 200 --step-delay-ms 10 --ckpt-every 10",
                      restart_yaml(0) + "placement: {preferred: [alpha]}\n"));
  ASSERT_GT(id, 0);
  json j = wait_trained_with_replica(id, "alpha", 35);
  ASSERT_FALSE(j.is_null());
  HttpResponse down = call(url_, "POST", "/api/v1/clusters/alpha/outage", R"({"down": true})");
  ASSERT_EQ(down.status, 200) << down.body;

  j = wait_final(id);
  ASSERT_FALSE(j.is_null());
  ASSERT_EQ(j["state"], "succeeded") << describe_job(url_, id);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 2u) << describe_job(url_, id);
  const json& first = list[0];
  const json& second = list[1];
  EXPECT_EQ(first["cluster"], "alpha");
  EXPECT_EQ(first["cause"], "site_down") << first.dump();
  EXPECT_EQ(second["cluster"], "beta");
  EXPECT_EQ(second["cause"], "succeeded");
  ASSERT_TRUE(first["last_step"].is_number()) << first.dump();
  ASSERT_TRUE(second["resumed_from"].is_object()) << describe_job(url_, id);

  // alpha's storage went down with it: the job resumes from the newest checkpoint that had
  // been copied to beta and verified there before the outage (issue 5), as its events say.
  int newest_at_beta = -1;
  std::int64_t placed_at = 0;
  const json events = get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/events");
  for (const auto& e : events["events"]) {
    if (e["kind"] == "placed" && e["attempt_no"] == 2) placed_at = e["at_ms"].get<std::int64_t>();
  }
  for (const auto& e : events["events"]) {
    const std::string m = e["message"];  // "checkpoint at step N of job J copied to beta ..."
    if (e["kind"] != "checkpoint-replicated" || m.find("copied to beta") == std::string::npos ||
        e["at_ms"].get<std::int64_t>() > placed_at) {
      continue;
    }
    newest_at_beta =
        std::max(newest_at_beta, std::stoi(m.substr(std::string("checkpoint at step ").size())));
  }
  const int last = first["last_step"].get<int>();
  const int resumed = second["resumed_from"]["step"].get<int>();
  EXPECT_GE(last, 35);
  ASSERT_GT(newest_at_beta, 0) << "nothing was replicated to beta" << describe_job(url_, id);
  EXPECT_EQ(resumed, newest_at_beta) << describe_job(url_, id);
  EXPECT_NE(second["resumed_from"]["path"].get<std::string>().find("/.orchestrate/replicas/"),
            std::string::npos)
      << "not beta's own copy: " << second.dump();
  EXPECT_NE(
      second["resumed_from"]["path"].get<std::string>().find("step-" + std::to_string(resumed)),
      std::string::npos)
      << second.dump();
  // The resume env var reached the trainer: it continued right after the checkpoint.
  EXPECT_EQ(second["first_step"], resumed + 1) << second.dump();
  EXPECT_EQ(second["last_step"], 200);
  ASSERT_TRUE(j["steps_lost"].is_number());
  EXPECT_EQ(j["steps_lost"].get<int>(), last - resumed) << j.dump();
  EXPECT_EQ(j["infra_restarts"], 1);

  json clusters = get_json(url_, "/api/v1/clusters");
  ASSERT_TRUE(clusters.is_object());
  for (const auto& c : clusters["clusters"]) {
    EXPECT_EQ(c["health"], c["name"] == "alpha" ? "down" : "healthy") << c.dump();
  }
}

TEST_F(E2eTest, UserErrorFailsAfterUserRestartsWithoutInfraRestarts) {
  const std::int64_t id =
      submit(job_yaml("buggy", "--steps 40 --step-delay-ms 5 --crash-at-step 5", restart_yaml(1)));
  ASSERT_GT(id, 0);
  json j = wait_final(id);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["state"], "failed") << describe_job(url_, id);
  EXPECT_EQ(j["infra_restarts"], 0);
  EXPECT_EQ(j["user_restarts"], 1);
  EXPECT_FALSE(j.value("reason", "").empty()) << j.dump();
  json list = attempts(id);
  ASSERT_EQ(list.size(), 2u) << describe_job(url_, id);
  for (const auto& a : list) {
    EXPECT_EQ(a["cause"], "user_error") << a.dump();
    EXPECT_EQ(a["exit_code"], 3) << a.dump();
  }
}

TEST_F(E2eTest, CancelEndsTheJobAndItsProcesses) {
  const std::int64_t id = submit(job_yaml("long", "--steps 5000 --step-delay-ms 20"));
  ASSERT_GT(id, 0);
  ASSERT_FALSE(wait_step(id, 5).is_null());
  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u);
  const std::string run_dir = state_ + "/sites/" + list[0]["cluster"].get<std::string>() +
                              "/runs/" + list[0]["token"].get<std::string>();
  auto pid = read_agent_pid(run_dir);
  ASSERT_TRUE(pid) << "no agent.pid in " << run_dir;
  ASSERT_TRUE(agent_lock_held(run_dir));
  ASSERT_TRUE(group_alive(*pid));

  HttpResponse r = call(url_, "POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel");
  ASSERT_EQ(r.status, 202) << r.body;
  json j = wait_final(id);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["state"], "cancelled") << describe_job(url_, id);
  // The site confirms the stop a poll or two later: the attempt then ends as cancelled.
  auto deadline = SteadyClock::now() + milliseconds(10000);
  while (SteadyClock::now() < deadline) {
    list = attempts(id);
    if (list.size() == 1 && list[0]["state"] == "exited") break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_EQ(list.size(), 1u) << describe_job(url_, id);
  EXPECT_EQ(list[0]["state"], "exited") << describe_job(url_, id);
  EXPECT_EQ(list[0]["cause"], "cancelled") << describe_job(url_, id);

  // Neither the agent nor anything it started (the shell, the trainer) may outlive the cancel.
  deadline = SteadyClock::now() + milliseconds(10000);
  while ((agent_lock_held(run_dir) || group_alive(*pid)) && SteadyClock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_FALSE(agent_lock_held(run_dir)) << "agent still holds " << run_dir << "/agent.lock";
  EXPECT_EQ(group_members(*pid), "") << "processes of the cancelled job still run 10 s later;"
                                     << " events.jsonl: " << read_file(run_dir + "/events.jsonl");

  // A second cancel of a finished job is a conflict, not a crash.
  HttpResponse again = call(url_, "POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel");
  EXPECT_EQ(again.status, 409) << again.body;
}

}  // namespace
}  // namespace orch::e2e
