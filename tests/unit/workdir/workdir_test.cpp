// The job's code and setup at a site (scheduler/model/workdir.h): paths, the setup key, what
// a launch carries, and what a failed setup's marker says.
#include "scheduler/model/workdir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/brain/launch_plan.h"
#include "scheduler/common/sha256.h"
#include "scheduler/lifecycle/failure_classifier.h"
#include "scheduler/lifecycle/restart_policy.h"
#include "scheduler/model/launch_limits.h"
#include "scheduler/model/launch_request_json.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kHash(64, 'a');

TEST(Sha256, MatchesTheStandardVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000, 'a')).size(), 64U);
}

TEST(WorkdirPaths, LieUnderTheStorageRoot) {
  EXPECT_EQ(code_archive_path("/shared/orch/", kHash), "/shared/orch/code/" + kHash + ".tar");
  EXPECT_EQ(code_tree_path("/shared/orch", kHash), "/shared/orch/code/" + kHash);
  EXPECT_EQ(setup_dir_path("/shared/orch", "k1"), "/shared/orch/setup/k1");
  EXPECT_EQ(code_store_path(kHash), "/code/" + kHash + ".tar");
}

TEST(WorkdirPaths, OnlyALowercaseSha256NamesCode) {
  EXPECT_TRUE(is_code_sha256(kHash));
  EXPECT_FALSE(is_code_sha256(std::string(64, 'A')));
  EXPECT_FALSE(is_code_sha256(std::string(63, 'a')));
  EXPECT_FALSE(is_code_sha256("../" + std::string(61, 'a')));
}

TEST(SetupKey, IsTheSameForTheSameClusterCodeSetupAndContainer) {
  EXPECT_EQ(setup_key("alpha", kHash, "pip install -e .", ""),
            setup_key("alpha", kHash, "pip install -e .", ""));
  EXPECT_TRUE(is_code_sha256(setup_key("alpha", kHash, "x", "")));
}

TEST(SetupKey, ChangesWithEachPartOfTheKey) {
  const std::string base = setup_key("alpha", kHash, "make", "");
  EXPECT_NE(base, setup_key("beta", kHash, "make", ""));
  EXPECT_NE(base, setup_key("alpha", std::string(64, 'b'), "make", ""));
  EXPECT_NE(base, setup_key("alpha", kHash, "make ", ""));
  EXPECT_NE(base, setup_key("alpha", kHash, "make", "image:1"));
}

TEST(SetupKey, NoTwoTuplesShareAKeyByMovingTextBetweenParts) {
  EXPECT_NE(setup_key("ab", "", "c", ""), setup_key("a", "", "bc", ""));
  EXPECT_NE(setup_key("a;", "", "b", ""), setup_key("a", "", ";b", ""));
}

TEST(SetupFailedMarker, GivesTheUsersCauseWithTheExitAndLastLines) {
  const ExitStatus s = setup_failed_exit("exit 3\nCollecting torch\nERROR: no network\n");
  EXPECT_EQ(s.cause, ExitCause::setup_failed);
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_EQ(s.detail, "setup failed (exit 3): Collecting torch | ERROR: no network");
}

TEST(SetupFailedMarker, KeepsTheNewestLinesWithinItsBudget) {
  std::string marker = "exit 1\n";
  for (int i = 0; i < 40; ++i) marker += "line number " + std::to_string(i) + " of the log\n";
  const ExitStatus s = setup_failed_exit(marker);
  EXPECT_LE(s.detail.size(), kSetupDetailBytes);
  EXPECT_THAT(s.detail, HasSubstr("line number 39 of the log"));
  EXPECT_THAT(s.detail, Not(HasSubstr("line number 0 of")));
}

TEST(SetupFailedMarker, AnUnreadableExitLineIsLeftOut) {
  const ExitStatus s = setup_failed_exit("exit x9\nboom\n");
  EXPECT_FALSE(s.exit_code);
  EXPECT_EQ(s.cause, ExitCause::setup_failed);
  EXPECT_THAT(s.detail, HasSubstr("boom"));
}

TEST(SetupFailedClassification, IsTheUsersCauseWithItsLinesAsEvidence) {
  FailureEvidence e;
  e.status = setup_failed_exit("exit 2\nModuleNotFoundError: No module named 'venv'\n");
  // A scary line in the log does not turn it into an infra failure.
  e.log_tail = {"[setup] NCCL WARN socket timeout", "[setup] failed with exit 2"};
  const FailureVerdict v = classify_failure(e);
  EXPECT_EQ(v.cause, ExitCause::setup_failed);
  EXPECT_EQ(v.rule, "setup");
  EXPECT_THAT(v.evidence, HasSubstr("No module named 'venv'"));
  EXPECT_FALSE(is_infra_cause(ExitCause::setup_failed));
  EXPECT_EQ(to_string(ExitCause::setup_failed), "setup_failed");
  EXPECT_EQ(parse_exit_cause("setup_failed"), ExitCause::setup_failed);
}

TEST(SetupFailedClassification, ACancelStillWins) {
  FailureEvidence e;
  e.status = setup_failed_exit("exit 2\n");
  e.cancel_requested = true;
  EXPECT_EQ(classify_failure(e).cause, ExitCause::cancelled);
}

LaunchRequest code_launch() {
  LaunchRequest r;
  r.token = "orch-1-1-a";
  r.job_id = 1;
  r.attempt_no = 1;
  r.job_name = "j";
  r.command = "true";
  r.code_sha256 = kHash;
  r.code_bytes = 10240;
  r.code_archive = code_archive_path("/s", kHash);
  r.workdir = code_tree_path("/s", kHash);
  r.setup = "python3 -m venv .venv";
  r.setup_per_node = true;
  r.setup_key = setup_key("c", kHash, r.setup, "");
  r.setup_dir = setup_dir_path("/s", r.setup_key);
  return r;
}

TEST(WorkdirLaunch, RoundTripsThroughTheOutboxJson) {
  const LaunchRequest r = code_launch();
  auto back = launch_request_from_json(launch_request_to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->code_sha256, r.code_sha256);
  EXPECT_EQ(back->code_bytes, r.code_bytes);
  EXPECT_EQ(back->code_archive, r.code_archive);
  EXPECT_EQ(back->workdir, r.workdir);
  EXPECT_EQ(back->setup, r.setup);
  EXPECT_TRUE(back->setup_per_node);
  EXPECT_EQ(back->setup_key, r.setup_key);
  EXPECT_EQ(back->setup_dir, r.setup_dir);
}

TEST(WorkdirLaunch, ALaunchWithoutCodeWritesNoneOfItsFields) {
  LaunchRequest r;
  r.token = "t";
  const auto j = launch_request_to_json(r);
  EXPECT_FALSE(j.contains("code_sha256"));
  EXPECT_FALSE(j.contains("setup"));
  EXPECT_TRUE(task_prelude(r).empty());
  EXPECT_TRUE(workdir_env(r, "/run/setup_failed").empty());
}

TEST(WorkdirLaunch, TheEnvironmentNamesWhatTheSnippetsRead) {
  const LaunchRequest r = code_launch();
  const auto env = workdir_env(r, "/run/setup_failed");
  std::map<std::string, std::string> m(env.begin(), env.end());
  EXPECT_EQ(m["ORCH_WORKDIR"], r.workdir);
  EXPECT_EQ(m["ORCH_CODE_ARCHIVE"], r.code_archive);
  EXPECT_EQ(m["ORCH_SETUP_DIR"], r.setup_dir);
  EXPECT_EQ(m["ORCH_SETUP_COMMAND"], r.setup);
  EXPECT_EQ(m["ORCH_SETUP_FAILED"], "/run/setup_failed");
}

TEST(WorkdirLaunch, ThePreludeExtractsSetsUpEntersAndExecs) {
  const std::string p = task_prelude(code_launch());
  const auto extract = p.find("tar -x");
  const auto setup = p.find("ORCH_SETUP_COMMAND");
  const auto enter = p.find("cd -- \"$ORCH_WORKDIR\" || exit 1");
  const auto run = p.find("exec \"$@\"");
  ASSERT_NE(extract, std::string::npos);
  ASSERT_NE(setup, std::string::npos);
  ASSERT_NE(enter, std::string::npos);
  ASSERT_NE(run, std::string::npos);
  EXPECT_LT(extract, setup);
  EXPECT_LT(setup, enter);
  EXPECT_LT(enter, run);
}

TEST(SetupSnippet, PerNodeMarkersCarryTheHostName) {
  EXPECT_THAT(setup_snippet(true), HasSubstr("orch_n=.$(hostname)"));
  EXPECT_THAT(setup_snippet(false), Not(HasSubstr("hostname")));
  EXPECT_THAT(setup_snippet(false), HasSubstr("flock 9"));
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

TEST(WorkdirLaunchPlan, ALaunchCarriesTheCodeAndSetupAtItsSite) {
  JobRow job;
  job.id = 9;
  job.name = "code";
  job.spec.command = "python -m mypkg.train";
  job.spec.workdir.sha256 = kHash;
  job.spec.workdir.bytes = 4096;
  job.spec.setup = "python3 -m venv .venv";
  job.spec.setup_per_node = true;
  ClusterSpec site;
  site.name = "alpha";
  site.storage_root = "/shared/orch";
  const std::vector<AttemptRow> attempts;
  LaunchPlanInput in;
  in.job = &job;
  in.attempts = &attempts;
  in.site = &site;
  in.now = 1000;
  const LaunchRequest r = plan_launch(in).launch;
  EXPECT_EQ(r.code_sha256, kHash);
  EXPECT_EQ(r.code_bytes, 4096);
  EXPECT_EQ(r.code_archive, "/shared/orch/code/" + kHash + ".tar");
  EXPECT_EQ(r.workdir, "/shared/orch/code/" + kHash);
  EXPECT_EQ(r.env.at("ORCH_WORKDIR"), r.workdir);
  EXPECT_EQ(r.setup, "python3 -m venv .venv");
  EXPECT_TRUE(r.setup_per_node);
  EXPECT_EQ(r.setup_key, setup_key("alpha", kHash, "python3 -m venv .venv", ""));
  EXPECT_EQ(r.setup_dir, "/shared/orch/setup/" + r.setup_key);
  // Another cluster: its own key (its own filesystem).
  site.name = "beta";
  EXPECT_NE(plan_launch(in).launch.setup_key, r.setup_key);
}

TEST(WorkdirLaunchPlan, AJobWithoutCodeStartsInItsRunDirectory) {
  JobRow job;
  job.id = 9;
  job.spec.command = "true";
  ClusterSpec site;
  site.name = "alpha";
  site.storage_root = "/shared/orch";
  const std::vector<AttemptRow> attempts;
  LaunchPlanInput in{};
  in.job = &job;
  in.attempts = &attempts;
  in.site = &site;
  const LaunchRequest r = plan_launch(in).launch;
  EXPECT_TRUE(r.workdir.empty());
  EXPECT_TRUE(r.setup_key.empty());
  EXPECT_EQ(r.env.count("ORCH_WORKDIR"), 0u);
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

TEST(WorkdirEnv, AJobsEnvMayNotSetTheVariablesOfItsCodeAndSetup) {
  for (const auto* name : {"ORCH_WORKDIR", "ORCH_CODE_ARCHIVE", "ORCH_SETUP_DIR",
                           "ORCH_SETUP_COMMAND", "ORCH_SETUP_FAILED"}) {
    EXPECT_TRUE(limits::is_reserved_env(name)) << name;
  }
}

}  // namespace
}  // namespace orch
