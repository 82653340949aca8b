// The status page in a real browser (issue 17): Debian's chromium, headless, driven by
// playwright-core (pages.mjs) against the real `orchestrate serve`, after a job ran through an
// outage of its first cluster. Every view renders what the API holds: both clusters, the job,
// its two attempts on the timeline, checkpoints, events and its log; no console error. Issue 41:
// the loss, throughput and MFU charts hold points of both attempts with their y-axis labels whole
// inside the chart, the log panel shows no protocol line until "raw output" is ticked, a job
// whose command is not found shows what failed in its header, as text, and one whose MFU is far
// above 100% says its model size or peak FLOPs are misconfigured; a gang's log shows one rank's
// tagged lines when that rank is chosen. Issue 42: a waiting sweep point's Spec and "Why it
// waits" panels and the jobs list's reason, GPUs, priority, team and group columns show what the
// API says, to an administrator and to a viewer (who gets no Cancel button). A screenshot of each
// view lands in <build>/screenshots/ for a person to see.
#include <gmock/gmock.h>

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

bool file_has_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_size > 1000;
}

class PageBrowserTest : public E2eTest {
 protected:
  // pages.mjs against this server with `token`; its JSON line and exit code.
  ProcessResult drive(const std::string& token, std::int64_t job, int attempts,
                      const std::string& out, bool expect_refused = false,
                      std::int64_t failed_job = 0, const std::string& excerpt = "",
                      std::int64_t flagged_job = 0, std::int64_t gang_job = 0,
                      std::int64_t waiting_job = 0, bool viewer = false) {
    const std::string dir = ORCH_SOURCE_DIR "/tests/browser";
    if (::access("/usr/bin/chromium", X_OK) != 0 ||
        ::access((dir + "/node_modules/playwright-core/package.json").c_str(), R_OK) != 0) {
      ProcessResult missing;
      missing.output =
          "chromium or playwright-core is missing: `make test` installs both (make test-deps)";
      return missing;
    }
    const std::vector<std::pair<std::string, std::string>> flags = {
        {"--url", url_},
        {"--token", token},
        {"--job", std::to_string(job)},
        {"--attempts", std::to_string(attempts)},
        {"--clusters", "alpha,beta"},
        {"--out", out},
        {"--expect-refused", expect_refused ? "1" : ""},
        {"--failed-job", failed_job > 0 ? std::to_string(failed_job) : ""},
        {"--excerpt", excerpt},
        {"--flagged-job", flagged_job > 0 ? std::to_string(flagged_job) : ""},
        {"--gang-job", gang_job > 0 ? std::to_string(gang_job) : ""},
        {"--waiting-job", waiting_job > 0 ? std::to_string(waiting_job) : ""},
        {"--viewer", viewer ? "1" : ""}};
    std::vector<std::string> argv = {"/usr/bin/env", "node", dir + "/pages.mjs"};
    for (const auto& [flag, value] : flags) {
      argv.push_back(flag);
      argv.push_back(value);
    }
    return run_process(argv, milliseconds(120000));
  }
};

TEST_F(PageBrowserTest, EveryViewShowsWhatTheApiHoldsForAJobThroughAnOutage) {
  const std::int64_t id =
      submit(job_yaml("through-outage", "--steps 300 --step-delay-ms 30 --ckpt-every 10",
                      "placement: {preferred: [alpha]}\n"));
  ASSERT_GT(id, 0);
  ASSERT_FALSE(wait_step(id, 40).is_null());
  ProcessResult down = cli({"cluster", "outage", "alpha", "--down"});
  ASSERT_EQ(down.exit_code, 0) << down.output;
  json done = wait_final(id);
  ASSERT_EQ(done["state"], "succeeded") << describe_job(url_, id);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  ASSERT_EQ(list[1]["cluster"], "beta");
  // A command that is not there, after a line a hostile tenant could print: the page's header
  // says what failed, as text.
  const std::int64_t failed = submit(
      "name: not-found\ncommand: \"echo '<img src=x onerror=alert(1)>' >&2; no-such-trainer\"\n"
      "resources: {nodes: 1, gpus_per_node: 1}\nplacement: {preferred: [beta]}\n" +
      restart_yaml(0));
  ASSERT_GT(failed, 0);
  ASSERT_EQ(wait_final(failed)["state"], "failed") << describe_job(url_, failed);
  // A toy that says it has 10^12 parameters: an MFU far above 100%, flagged on the job.
  const std::int64_t flagged =
      submit("name: too-big\ncommand: " + testkit::job_bin_dir() +
             "/toy_trainer --dim 32 --batch 16 --steps 30 --step-delay-ms 20\n"
             "resources: {nodes: 1, gpus_per_node: 1}\n"
             "model: {parameters: 1.0e12}\nplacement: {preferred: [beta]}\n");
  ASSERT_GT(flagged, 0);
  json big = wait_final(flagged);
  ASSERT_EQ(big["state"], "succeeded") << describe_job(url_, flagged);
  ASSERT_THAT(big["mfu_flag"].get<std::string>(), HasSubstr("misconfigured")) << big.dump();
  // A gang of two ranks on beta's two nodes: its log's lines carry [node/rank] tags.
  const std::int64_t gang = submit(
      "name: gang\ncommand: " + testkit::job_bin_dir() +
      "/toy_trainer --dim 32 --batch 16 --steps 20 --step-delay-ms 10 --rendezvous-timeout-s 30\n"
      "resources: {nodes: 2, gpus_per_node: 1}\nmodel: {parameters: 1024}\n"
      "placement: {preferred: [beta]}\n");
  ASSERT_GT(gang, 0);
  ASSERT_EQ(wait_final(gang)["state"], "succeeded") << describe_job(url_, gang);

  const std::string out = ORCH_BINARY_DIR "/screenshots";
  ProcessResult r =
      drive(server_->admin_token(), id, 2, out, false, failed, "no-such-trainer", flagged, gang);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("\"ok\":true"));
  EXPECT_THAT(r.output, HasSubstr("#1 site_down"));
  EXPECT_THAT(r.output, HasSubstr("#2 succeeded"));
  // Attempt 2's recovery, in its parts: the outage was seen after the site's grace, and it was
  // placed on beta in the same event (no backoff for a first infra failure).
  EXPECT_THAT(r.output, ::testing::ContainsRegex(
                            "attempt 2 after site_down: [0-9.]+ s: detection [0-9.]+ s, backoff "
                            "0.0 s, placing 0.0 s, site [0-9.]+ s, startup [0-9.]+ s"));
  EXPECT_THAT(r.output, HasSubstr("#error-excerpt: "));
  EXPECT_THAT(r.output, HasSubstr("#mfu-flag: "));
  EXPECT_THAT(r.output, HasSubstr("gang log ranks: "));
  for (const char* view :
       {"fleet", "jobs", "job", "job-failed", "job-mfu-flag", "job-gang", "nodes", "transfers"}) {
    EXPECT_TRUE(file_has_bytes(out + "/" + view + ".png")) << view;
  }
}

TEST_F(PageBrowserTest, AWaitingSweepPointsSpecAndWhyItWaitsShowWhatTheApiSaysToAViewerToo) {
  // alpha down, and the sweep allowed only there: each point waits, refused on both clusters.
  ASSERT_EQ(cli({"cluster", "outage", "alpha", "--down"}).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return cluster_row("alpha")["health"] == "down"; }))
      << cluster_row("alpha").dump();
  const std::int64_t first =
      submit("name: lr-sweep\ncommand: " + testkit::job_bin_dir() +
             "/toy_trainer --dim 32 --steps 10\n"
             "resources: {nodes: 1, gpus_per_node: 2}\nenv: {WANDB_MODE: offline}\n"
             "team: vision\npriority: 5\ntime_limit: 2h\nplacement: {allowed: [alpha]}\n"
             "sweep: {env: {LR: [1e-4, 3e-4]}, args: [\"--seed 1\"]}\n");
  ASSERT_GT(first, 0);
  json point = job(first);
  ASSERT_EQ(point["sweep_point"], "LR=1e-4 --seed 1") << point.dump();
  ASSERT_EQ(point["state"], "pending") << point.dump();
  ASSERT_TRUE(eventually([&] {
    json why = get_json(url_, "/api/v1/jobs/" + std::to_string(first) + "/explain");
    return why.is_object() && why["clusters"].is_array() && why["clusters"].size() == 2u;
  })) << describe_job(url_, first);
  const std::string out = ORCH_BINARY_DIR "/screenshots";
  ProcessResult admin =
      drive(server_->admin_token(), first, 0, out, false, 0, "", 0, 0, first, false);
  EXPECT_EQ(admin.exit_code, 0) << admin.output;
  EXPECT_THAT(admin.output, HasSubstr("\"ok\":true"));
  EXPECT_THAT(admin.output, HasSubstr("\"cancel\":true"));

  ProcessResult made = cli({"token", "create", "vera", "--role", "viewer"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const std::string token = made.output.substr(made.output.find("orch_"), 69);
  ProcessResult viewer = drive(token, first, 0, out, false, 0, "", 0, 0, first, true);
  EXPECT_EQ(viewer.exit_code, 0) << viewer.output;
  EXPECT_THAT(viewer.output, HasSubstr("\"ok\":true"));
  EXPECT_THAT(viewer.output, HasSubstr("\"cancel\":false"));
  for (const char* shot : {"job-waiting", "job-waiting-viewer", "jobs-viewer"}) {
    EXPECT_TRUE(file_has_bytes(out + "/" + shot + ".png")) << shot;
  }
}

TEST_F(PageBrowserTest, ARevokedTokenIsSentBackToSignInSayingWhy) {
  ProcessResult made = cli({"token", "create", "carol", "--role", "viewer"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const std::string token = made.output.substr(made.output.find("orch_"), 69);
  ASSERT_EQ(cli({"token", "revoke", "carol"}).exit_code, 0);
  ProcessResult r = drive(token, 0, 0, dir_->path() + "/shots", true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the token was refused: "));
}

}  // namespace
}  // namespace orch::e2e
