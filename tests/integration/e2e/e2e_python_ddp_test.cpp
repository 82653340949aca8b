// Issue 41's acceptance: a real PyTorch DDP job (examples/python/train_ddp.py over gloo, using the
// orchestrate client from python/ as one copied file) runs as 2 nodes x 2 tasks on local sites.
// Its site goes down: it resumes on the other site from the replicated checkpoint. A job of
// higher priority then needs that site: it saves through save_requested() (SIGUSR1), is stopped,
// and resumes from that save once the room is back. It succeeds; its loss series has no gap
// beyond the lost steps, and each resumed attempt's first step is its checkpoint's step + 1, with
// the loss the run had at that step. Skipped where PyTorch is not installed (`make test` installs
// Debian's python3-torch).
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 150;

bool have_torch() {
  return run_process({"/usr/bin/python3", "-c", "import torch.distributed"}, milliseconds(60000))
             .exit_code == 0;
}

// Two local sites of 2 virtual nodes x 2 slots: the 2 x 2 job fills one.
class PythonDdpE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    start_with(local_clusters_yaml(2, 2) + "priority_classes: {hero: 1000, ablation: 100}\n");
  }

  // The example and the client where the job's user can read them: the client as one file,
  // orchestrate.py beside the script (python/README.md, the copied-file use), in a directory it
  // may list (Python lists the directories it imports from; the temp dir is search-only).
  std::string install_example() {
    const std::string code = dir_->path() + "/code";
    fs::create_directory(code);
    ::chmod(code.c_str(), 0755);
    const std::string script = code + "/train_ddp.py";
    const std::string client = code + "/orchestrate.py";
    fs::copy_file(ORCH_SOURCE_DIR "/examples/python/train_ddp.py", script);
    fs::copy_file(ORCH_SOURCE_DIR "/python/orchestrate/__init__.py", client);
    ::chmod(script.c_str(), 0644);
    ::chmod(client.c_str(), 0644);
    return script;
  }

  std::string ddp_yaml(const std::string& script) const {
    return "name: ddp\n"
           "command: exec /usr/bin/python3 " +
           script + " --steps " + std::to_string(kSteps) +
           " --ckpt-every 10 --step-delay-s 0.05\n"
           "env: {PYTHONDONTWRITEBYTECODE: '1'}\n"
           "resources: {nodes: 2, gpus_per_node: 2, tasks_per_node: 2}\n"
           "checkpoint: {interval_steps: 10}\n"
           "priority: ablation\n"
           "preemption: {grace_s: 60}\n" +
           restart_yaml(0) + "placement: {preferred: [alpha]}\n";
  }

  std::string log_of(std::int64_t id, int attempt) {
    return call(url_, "GET",
                "/api/v1/jobs/" + std::to_string(id) + "/logs?attempt=" + std::to_string(attempt))
        .body;
  }
  json series(std::int64_t id) {
    return get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/series");
  }
};

// The steps of one attempt's series, each with its loss (every step is its own point: the run
// is far below the cap).
std::map<int, double> losses_of(const json& attempt) {
  std::map<int, double> out;
  for (const auto& p : attempt["points"]) {
    if (p["loss"].is_number()) out[p["step"].get<int>()] = p["loss"].get<double>();
  }
  return out;
}

TEST_F(PythonDdpE2eTest, ADdpJobResumesThroughAnOutageAndSavesWhenAskedAndItsLossCurveGoesOn) {
  if (!have_torch()) GTEST_SKIP() << "PyTorch is not installed (Debian's python3-torch)";
  const std::int64_t id = submit(ddp_yaml(install_example()));
  ASSERT_GT(id, 0);

  // 1. Trains on alpha until a checkpoint of it is copied to beta; then alpha goes down.
  json running = wait_trained_with_replica(id, "alpha", 25);
  ASSERT_FALSE(running.is_null());
  ASSERT_EQ(call(url_, "POST", "/api/v1/clusters/alpha/outage", R"({"down": true})").status, 200);

  // 2. Goes on at beta from the copy, past a few steps.
  json moved = wait_job(
      id,
      [&](const json&) {
        json list = attempts(id);
        return list.size() == 2 && list[1]["state"] == "running" && list[1]["cluster"] == "beta" &&
               list[1]["resumed_from"].is_object() && list[1]["last_step"].is_number() &&
               list[1]["last_step"].get<int>() >= list[1]["resumed_from"]["step"].get<int>() + 5;
      },
      "resume on beta", milliseconds(90000));
  ASSERT_FALSE(moved.is_null());

  // 3. A hero job needs beta (alpha is down): the DDP job is asked to save and is stopped.
  const std::int64_t hero = submit(job_yaml("hero", "--steps 20 --step-delay-ms 20",
                                            "priority: hero\nplacement: {allowed: [beta]}\n"));
  ASSERT_GT(hero, 0);
  final_timeout_ = milliseconds(120000);
  EXPECT_EQ(wait_final(hero).value("state", ""), "succeeded") << describe_job(url_, hero);

  json done = wait_final(id);
  ASSERT_EQ(done.value("state", ""), "succeeded") << describe_job(url_, id);
  EXPECT_EQ(done["step"], kSteps);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 3u) << describe_job(url_, id);
  EXPECT_EQ(list[0]["cluster"], "alpha");
  EXPECT_EQ(list[1]["cluster"], "beta");
  EXPECT_EQ(list[1]["cause"], "priority_preempted") << list[1].dump();
  ASSERT_TRUE(list[1]["resumed_from"].is_object()) << list.dump();
  ASSERT_TRUE(list[2]["resumed_from"].is_object()) << list.dump();

  // The save came through save_requested(): the example's line, and its checkpoint registered
  // by attempt 2 at that step; attempt 3 resumed from it or from the save of the stop after it.
  const std::string logs = log_of(id, 2);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(logs, m, std::regex("saved on request at step (\\d+)"))) << logs;
  const int asked = std::stoi(m[1].str());
  bool registered = false;
  for (const auto& e : events(id)) {
    registered |= e["kind"] == "checkpoint" && e["attempt_no"] == 2 &&
                  e["message"].get<std::string>().find("checkpoint at step " +
                                                       std::to_string(asked) + ":") == 0;
  }
  EXPECT_TRUE(registered) << describe_job(url_, id);
  EXPECT_GE(list[2]["resumed_from"]["step"].get<int>(), asked) << list.dump();
  EXPECT_LE(list[2]["resumed_from"]["step"].get<int>(), list[1]["last_step"].get<int>());
  EXPECT_NE(logs.find("resumed from step"), std::string::npos) << logs;
  EXPECT_NE(logs.find("stopping after step"), std::string::npos) << "the TERM that followed";
  EXPECT_NE(log_of(id, 3).find("resumed from step " +
                               std::to_string(list[2]["resumed_from"]["step"].get<int>())),
            std::string::npos);

  // The loss series (GET /api/v1/jobs/{id}/series): one curve across the three attempts.
  json s = series(id);
  ASSERT_TRUE(s["attempts"].is_array()) << s.dump();
  ASSERT_EQ(s["attempts"].size(), 3u) << s.dump();
  std::vector<std::map<int, double>> curves;
  for (const auto& a : s["attempts"]) curves.push_back(losses_of(a));
  ASSERT_FALSE(curves[0].empty()) << s.dump();
  EXPECT_EQ(curves[0].begin()->first, 1);
  EXPECT_EQ(curves[2].rbegin()->first, kSteps);
  int compared = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    const auto& curve = curves[k];
    ASSERT_FALSE(curve.empty()) << "attempt " << k + 1 << ": " << s.dump();
    // Every step of an attempt is there, from its first to its last: no gap inside it.
    EXPECT_EQ(curve.size(),
              static_cast<std::size_t>(curve.rbegin()->first - curve.begin()->first + 1))
        << "attempt " << k + 1 << ": " << s.dump();
    if (k == 0) continue;
    // A resumed attempt starts at its checkpoint's step + 1, no later than one past where the
    // attempt before it got (the steps in between are the lost ones, redone)...
    const int resumed = list[k]["resumed_from"]["step"].get<int>();
    const int first = curve.begin()->first;
    EXPECT_EQ(first, resumed + 1) << "attempt " << k + 1;
    EXPECT_LE(first, curves[k - 1].rbegin()->first + 1) << "attempt " << k + 1;
    // ... with the loss the run had at that step: the state and the data are the checkpoint's.
    auto before = curves[k - 1].find(first);
    if (before == curves[k - 1].end()) continue;
    ++compared;
    EXPECT_NEAR(curve.begin()->second, before->second, 1e-3 * std::abs(before->second))
        << "step " << first << " of attempt " << k + 1 << " against attempt " << k;
  }
  EXPECT_GE(compared, 1) << "no resumed step was also run before the resume: " << s.dump();
}

}  // namespace
}  // namespace orch::e2e
