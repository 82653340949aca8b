// End-to-end tests of the server process itself: crash safety (SIGKILL and restart on the same
// state dir never launches an attempt twice), bad input, the CLI as a client, and the lock that
// keeps a second server off a state directory.
#include <signal.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "e2e_fixture.h"

namespace orch::e2e {
namespace {

// Every run directory belongs to an attempt, and no attempt has more than one (a token that
// shows up under both sites was launched twice).
void expect_run_dirs_match_attempts(const std::string& state, const json& attempts) {
  std::set<std::string> tokens;
  for (const auto& a : attempts) {
    EXPECT_TRUE(tokens.insert(a["token"].get<std::string>()).second)
        << "duplicate token " << a["token"] << " in " << attempts.dump();
  }
  std::set<std::string> seen;
  for (const auto& run : list_run_dirs(state)) {
    EXPECT_TRUE(seen.insert(run.token).second) << "token " << run.token << " has a run dir on "
                                               << "more than one site, e.g. " << run.path;
    EXPECT_TRUE(tokens.count(run.token))
        << "run dir " << run.path << " belongs to no attempt of " << attempts.dump();
  }
}

TEST_F(E2eTest, ServerKilledMidRunAdoptsTheRunningAttempt) {
  const std::int64_t id = submit(job_yaml("survivor", "--steps 300 --step-delay-ms 20"));
  ASSERT_GT(id, 0);
  ASSERT_FALSE(wait_step(id, 20).is_null());
  auto runs = list_run_dirs(state_);
  ASSERT_EQ(runs.size(), 1u);
  auto pid = read_agent_pid(runs[0].path);
  ASSERT_TRUE(pid);

  server_->kill9();
  EXPECT_TRUE(agent_lock_held(runs[0].path)) << "the agent died with the server";
  EXPECT_TRUE(group_alive(*pid));

  start_server();
  json j = wait_final(id);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["state"], "succeeded") << describe_job(url_, id);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u) << "launched again after the restart" << describe_job(url_, id)
                             << describe_run_dirs(state_);
  EXPECT_EQ(list[0]["cause"], "succeeded");
  EXPECT_EQ(list[0]["last_step"], 300);
  EXPECT_EQ(list_run_dirs(state_).size(), 1u);
  expect_run_dirs_match_attempts(state_, list);
}

// A crash at any moment around submission (before placement, mid-launch, just after launch)
// must not leave the job stuck or start it twice. The parameter is the delay before SIGKILL;
// -1 kills the server the moment the job's run directory appears (mid-launch).
class E2eCrashAfterSubmit : public E2eTest, public ::testing::WithParamInterface<int> {};

TEST_P(E2eCrashAfterSubmit, RestartFinishesTheJobWithoutDuplicateLaunches) {
  const std::int64_t id =
      submit(job_yaml("early", "--steps 30 --step-delay-ms 10", restart_yaml(0)));
  ASSERT_GT(id, 0);
  if (GetParam() >= 0) {
    std::this_thread::sleep_for(milliseconds(GetParam()));
  } else {
    // Mid-launch: as soon as the site has created the run dir, before the agent is up.
    const auto deadline = SteadyClock::now() + milliseconds(10000);
    while (list_run_dirs(state_).empty() && SteadyClock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  server_->kill9();
  start_server();
  json j = wait_final(id);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["state"], "succeeded") << describe_job(url_, id);
  json list = attempts(id);
  ASSERT_GE(list.size(), 1u);
  EXPECT_EQ(list.back()["cause"], "succeeded") << describe_job(url_, id);
  expect_run_dirs_match_attempts(state_, list);
  // adapters/local/README.md: a run dir left by a server that crashed before starting the agent
  // is completed by the next launch, not reported as a dead attempt.
  EXPECT_EQ(list.size(), 1u) << "a crash around launch cost an attempt" << describe_job(url_, id)
                             << describe_run_dirs(state_);
}

INSTANTIATE_TEST_SUITE_P(Crash, E2eCrashAfterSubmit, ::testing::Values(-1, 0, 100, 300),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return p.param < 0 ? std::string("MidLaunch")
                                              : "After" + std::to_string(p.param) + "ms";
                         });

TEST_F(E2eTest, BadInputNeverCrashesTheServer) {
  auto expect_problem = [&](const HttpResponse& r, int status, const std::string& what) {
    EXPECT_EQ(r.status, status) << what << ": " << r.body;
    EXPECT_NE(r.content_type.find("problem+json"), std::string::npos) << what << r.content_type;
    json p = json::parse(r.body, nullptr, false);
    EXPECT_TRUE(p.is_object() && p["detail"].is_string() && !p["detail"].get<std::string>().empty())
        << what << ": " << r.body;
    EXPECT_TRUE(server_->alive()) << "the server died on: " << what;
    return p.is_object() ? p.value("detail", "") : std::string();
  };
  HttpResponse r = call(url_, "POST", "/api/v1/jobs", "{\"name\": \"x\", \"command\": ");
  EXPECT_GE(r.status, 400);
  EXPECT_LT(r.status, 500);
  expect_problem(r, r.status, "malformed JSON");

  const std::string wrong_types =
      "name: wrong\ncommand: /bin/true\nresources:\n  nodes: \"two\"\n  gpus_per_node: 1\n";
  r = call(url_, "POST", "/api/v1/jobs?source=wrong.yaml", wrong_types, "application/yaml");
  std::string detail = expect_problem(r, 422, "wrong types");
  EXPECT_TRUE(std::regex_search(detail, std::regex(R"(:\d+:\d+)"))) << detail;
  EXPECT_NE(detail.find("wrong.yaml:4:"), std::string::npos) << detail;

  expect_problem(call(url_, "GET", "/api/v1/jobs/987654"), 404, "unknown job");
  expect_problem(call(url_, "POST", "/api/v1/jobs/987654/cancel"), 404, "cancel unknown job");
  expect_problem(call(url_, "GET", "/api/v1/jobs/abc"), 400, "bad id");
  expect_problem(call(url_, "GET", "/api/v1/jobs/99999999999999999999"), 400, "huge id");
  expect_problem(call(url_, "GET", "/api/v1/jobs?state=bogus"), 400, "bad state filter");
  expect_problem(call(url_, "GET", "/api/v1/nowhere"), 404, "unknown route");
  expect_problem(call(url_, "POST", "/api/v1/jobs", ""), 400, "empty body");
  expect_problem(call(url_, "POST", "/api/v1/jobs", "name: x", "image/png"), 415, "wrong type");
  expect_problem(call(url_, "POST", "/api/v1/clusters/alpha/outage", R"({"down": "yes"})"), 422,
                 "down not a boolean");
  expect_problem(call(url_, "POST", "/api/v1/clusters/nope/outage", R"({"down": true})"), 404,
                 "unknown cluster");

  r = call(url_, "DELETE", "/api/v1/jobs");
  expect_problem(r, 405, "wrong method");
  EXPECT_NE(r.header("Allow").find("GET"), std::string::npos) << r.header("Allow");

  r = call(url_, "POST", "/api/v1/jobs", std::string(2 << 20, 'a'), "application/yaml");
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 300);
  EXPECT_TRUE(server_->alive());

  // Deep nesting and binary garbage must be rejected, not overflow the parser's stack.
  r = call(url_, "POST", "/api/v1/jobs", std::string(200000, '['), "application/yaml");
  EXPECT_GE(r.status, 400) << r.body.substr(0, 300);
  EXPECT_LT(r.status, 500) << r.body.substr(0, 300);
  EXPECT_TRUE(server_->alive()) << "deeply nested YAML crashed the server";
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>((i * 7919) % 256));
  r = call(url_, "POST", "/api/v1/jobs", garbage, "application/yaml");
  EXPECT_GE(r.status, 400) << r.body.substr(0, 300);
  EXPECT_LT(r.status, 500) << r.body.substr(0, 300);

  ASSERT_TRUE(server_->alive());
  EXPECT_EQ(call(url_, "GET", "/healthz").status, 200);
  EXPECT_EQ(call(url_, "GET", "/api/v1/clusters").status, 200);
  json jobs = get_json(url_, "/api/v1/jobs");
  ASSERT_TRUE(jobs.is_object());
  EXPECT_TRUE(jobs["jobs"].empty()) << "a bad request created a job: " << jobs.dump();
}

// Issue 12: one bad byte in a spec used to abort the server (nlohmann's type_error.316 on the
// brain's thread). Through REST and through the CLI it is now a client error naming the field,
// and the server goes on.
TEST_F(E2eTest, InvalidUtf8InASpecIsRefusedAndTheServerStaysUp) {
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"name: bad\ncommand: \"train \xff\xfe\"\nresources: {nodes: 1, gpus_per_node: 1}\n",
       "application/yaml"},
      {"{\"name\": \"bad\", \"command\": \"train \xc3\x28\"}", "application/json"},
      {"name: bad\ncommand: train\nenv: {A: \"\xed\xa0\x80\"}\n", "application/yaml"},
  };
  for (const auto& [body, type] : bodies) {
    HttpResponse r = call(url_, "POST", "/api/v1/jobs", body, type);
    EXPECT_GE(r.status, 400) << r.body;
    EXPECT_LT(r.status, 500) << r.body;
    EXPECT_NE(r.body.find("UTF-8"), std::string::npos) << r.body;
    ASSERT_TRUE(server_->alive()) << "a spec with invalid UTF-8 stopped the server";
  }
  const std::string bin = ORCH_BIN_DIR "/orchestrate";
  const std::string spec = dir_->path() + "/bad-utf8.yaml";
  write_file(spec, bodies[0].first);
  ProcessResult r = run_process({bin, "--server", url_, "--state", state_, "job", "submit", spec},
                                milliseconds(20000));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("UTF-8"), std::string::npos) << r.output;
  ASSERT_TRUE(server_->alive());
  EXPECT_EQ(call(url_, "GET", "/healthz").status, 200);
  json jobs = get_json(url_, "/api/v1/jobs");
  ASSERT_TRUE(jobs.is_object());
  EXPECT_TRUE(jobs["jobs"].empty()) << "a refused spec created a job: " << jobs.dump();
}

TEST_F(E2eTest, CliDrivesTheRealServer) {
  const std::string bin = ORCH_BIN_DIR "/orchestrate";
  const std::string spec = dir_->path() + "/cli-job.yaml";
  write_file(spec, job_yaml("cli-job", "--steps 20 --step-delay-ms 5"));
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {bin, "--server", url_, "--state", state_});
    return run_process(args, milliseconds(20000));
  };

  ProcessResult r = cli({"job", "submit", spec});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"((\d+))"))) << r.output;
  const std::string id = m[1];
  json j = wait_final(std::stoll(id));
  ASSERT_FALSE(j.is_null());
  ASSERT_EQ(j["state"], "succeeded");

  r = cli({"job", "list"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cli-job"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("succeeded"), std::string::npos) << r.output;
  r = cli({"job", "show", id});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cli-job"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(j["cluster"].get<std::string>()), std::string::npos) << r.output;
  r = cli({"job", "explain", id});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("alpha"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("beta"), std::string::npos) << r.output;
  r = cli({"cluster", "list"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("alpha"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("beta"), std::string::npos) << r.output;
  r = cli({"job", "logs", id});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("@orchestrate"), std::string::npos) << "hidden by default: " << r.output;
  r = cli({"job", "logs", id, "--raw"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("@orchestrate"), std::string::npos) << r.output;

  r = cli({"-o", "json", "job", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json list = json::parse(r.output, nullptr, false);
  ASSERT_TRUE(list.is_object()) << r.output;
  ASSERT_EQ(list["jobs"].size(), 1u) << r.output;
  EXPECT_EQ(list["jobs"][0]["id"].get<std::int64_t>(), std::stoll(id));
  r = cli({"job", "show", id, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json show = json::parse(r.output, nullptr, false);
  ASSERT_TRUE(show.is_object()) << r.output;
  EXPECT_EQ(show["job"]["state"], "succeeded");
  EXPECT_EQ(show["attempts"].size(), 1u);

  r = cli({"job", "show", "987654"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error:"), std::string::npos) << r.output;
  r = run_process({bin, "--server", "http://127.0.0.1:1", "job", "list"}, milliseconds(20000));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(server_->alive());
}

TEST_F(E2eTest, ASweepSubmittedByTheCliRunsOneJobPerPointListedByItsGroup) {
  const std::string spec = dir_->path() + "/sweep.yaml";
  write_file(
      spec, job_yaml("lr", "--step-delay-ms 5") +
                "sweep: {env: {LR: [\"1e-3\", \"3e-4\"]}, args: [\"--steps 6\", \"--steps 8\"]}\n");
  ProcessResult r = cli({"job", "submit", spec});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The ids on stdout, one per line; output() holds stderr too, where the CLI says first what
  // to do next ("submitted 4 jobs; see them with: orchestrate job list --group lr").
  std::vector<std::int64_t> ids;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("submitted 4 jobs; see them with: orchestrate job list --group lr")) {
      continue;
    }
    ids.push_back(std::atoll(line.c_str()));
    EXPECT_EQ(std::to_string(ids.back()), line) << r.output;
  }
  ASSERT_EQ(ids.size(), 4u) << "one id per point, one per line: " << r.output;
  submit(job_yaml("other", "--steps 3"));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    json j = wait_final(ids[i]);
    ASSERT_FALSE(j.is_null());
    EXPECT_EQ(j["state"], "succeeded") << j.dump();
    EXPECT_EQ(j["name"], "lr-" + std::to_string(i + 1));
    EXPECT_EQ(j["group"], "lr");
  }
  EXPECT_EQ(job(ids[3])["step"], 8) << "the last point ran with --steps 8";

  r = cli({"-o", "json", "job", "list", "--group", "lr"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json list = json::parse(r.output, nullptr, false);
  ASSERT_TRUE(list.is_object()) << r.output;
  ASSERT_EQ(list["jobs"].size(), 4u) << r.output;
  for (const auto& j : list["jobs"]) EXPECT_EQ(j["group"], "lr");
  r = cli({"job", "list", "--group", "lr"});
  EXPECT_EQ(r.output.find("other"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lr-4"), std::string::npos) << r.output;
}

TEST_F(E2eTest, SecondServerOnTheSameStateDirRefusesToStart) {
  ProcessResult r = run_process(
      {ORCH_BIN_DIR "/orchestrate", "serve", "--config", config_, "--state", state_, "--port", "0"},
      milliseconds(15000));
  EXPECT_FALSE(r.timed_out) << "the second server kept running: " << r.output;
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("another orchestrate server"), std::string::npos) << r.output;
  EXPECT_TRUE(server_->alive());
  EXPECT_EQ(call(url_, "GET", "/healthz").status, 200);

  // Once the first one stops, the state dir is free again.
  EXPECT_EQ(server_->stop(), 0);
  start_server();
  EXPECT_EQ(call(url_, "GET", "/healthz").status, 200);
}

}  // namespace
}  // namespace orch::e2e
