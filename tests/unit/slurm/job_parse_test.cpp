// squeue, scontrol show job and sacct: real outputs of the very argv this code builds
// (Slurm 22.05 lab, fixtures/lab-22.05) and newer formats from Slurm's documentation
// (fixtures/docs-24.x). sbatch and malformed output: job_output_errors_test.cpp.
#include <gmock/gmock.h>

#include <optional>
#include <string>
#include <vector>

#include "adapters/slurm/slurm_parse.h"
#include "tests/unit/slurm/fixture.h"

namespace orch::slurm {
namespace {

using ::testing::ElementsAre;
using testing::fixture;
using ::testing::HasSubstr;

struct Want {
  std::string id;
  std::string name;
  std::string state;
  std::string reason;
  std::vector<std::string> nodes;
  std::optional<int> code;
  std::optional<int> signal;
  std::string comment;
  std::string by;
};

std::string lab_comment(const std::string& token) {
  return "orchestrate token=" + token + " name=lab job";
}

void expect_jobs(const Result<std::vector<JobRecord>>& jobs, const std::vector<Want>& want) {
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const JobRecord& j = (*jobs)[i];
    const Want& w = want[i];
    SCOPED_TRACE(w.id);
    EXPECT_EQ(j.job_id, w.id);
    EXPECT_EQ(j.name, w.name);
    EXPECT_EQ(j.state, w.state);
    EXPECT_EQ(j.reason, w.reason);
    EXPECT_EQ(j.nodes, w.nodes);
    EXPECT_EQ(j.exit_code, w.code);
    EXPECT_EQ(j.signal, w.signal);
    EXPECT_EQ(j.comment, w.comment);
    EXPECT_EQ(j.cancelled_by, w.by);
  }
}

const std::vector<std::string> kN1 = {"alpha-n1"};
const std::vector<std::string> kN12 = {"alpha-n1", "alpha-n2"};
const std::vector<std::string> kNone = {};
const std::string kNodesDown =
    "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions";

// ---- argv -------------------------------------------------------------------------------

TEST(slurm_parse_argv, ExplicitFormats) {
  EXPECT_THAT(squeue_by_name_argv("orch-7-2-5f3a9c"),
              ElementsAre("squeue", "-h", "-t", "all", "--name=orch-7-2-5f3a9c", "-o",
                          "%i|%j|%T|%r|%N|%k"));
  EXPECT_THAT(scontrol_show_job_argv("123"), ElementsAre("scontrol", "-o", "show", "job", "123"));
  EXPECT_THAT(
      sacct_by_name_argv("orch-7-2-5f3a9c"),
      ElementsAre("sacct", "-n", "-P", "-X", "--starttime=now-30days", "--name=orch-7-2-5f3a9c",
                  "--format=JobID,JobName,State,ExitCode,NodeList,Reason,Comment"));
}

// ---- squeue -----------------------------------------------------------------------------

TEST(slurm_parse_squeue, Lab2205EveryState) {
  struct Case {
    const char* file;
    Want want;
  };
  const Case cases[] = {
      {"squeue-running-2-nodes.txt",
       {"9", "orch-6-1-run", "RUNNING", "", kN12, {}, {}, lab_comment("orch-6-1-run")}},
      {"squeue-pending-resources.txt",
       {"10",
        "orch-7-1-pend",
        "PENDING",
        "Resources",
        kNone,
        {},
        {},
        lab_comment("orch-7-1-pend")}},
      // Kept out by a reservation for someone else (sinfo shows those nodes idle, "reserved").
      {"squeue-pending-reserved.txt",
       {"8",
        "orch-8-1-resv",
        "PENDING",
        "ReqNodeNotAvail, May be reserved for other job",
        kNone,
        {},
        {},
        lab_comment("orch-8-1-resv")}},
      {"squeue-pending-reserved-partition.txt",
       {"9",
        "orch-9-1-resvp",
        "PENDING",
        "ReqNodeNotAvail, May be reserved for other job",
        kNone,
        {},
        {},
        lab_comment("orch-9-1-resvp")}},
      {"squeue-pending-nodes-down.txt",
       {"10", "orch-7-1-pend", "PENDING", kNodesDown, kNone, {}, {}, lab_comment("orch-7-1-pend")}},
      {"squeue-completed.txt",
       {"4", "orch-1-1-ok", "COMPLETED", "", kN1, {}, {}, lab_comment("orch-1-1-ok")}},
      {"squeue-failed-exit-3.txt",
       {"6",
        "orch-3-1-fail",
        "FAILED",
        "NonZeroExitCode",
        kN1,
        {},
        {},
        lab_comment("orch-3-1-fail")}},
      {"squeue-failed-sigkill.txt",
       {"7",
        "orch-4-1-sig",
        "FAILED",
        "JobLaunchFailure",
        kN1,
        {},
        {},
        lab_comment("orch-4-1-sig")}},
      {"squeue-failed-usr1.txt",
       {"17",
        "orch-13-1-sig",
        "FAILED",
        "JobLaunchFailure",
        kN1,
        {},
        {},
        lab_comment("orch-13-1-sig")}},
      {"squeue-launch-failed.txt",
       {"12",
        "orch-9-1-nolog",
        "FAILED",
        "JobLaunchFailure",
        kN1,
        {},
        {},
        lab_comment("orch-9-1-nolog")}},
      {"squeue-refused-at-submit.txt",
       {"13",
        "orch-10-1-toobig",
        "FAILED",
        "BadConstraints",
        kNone,
        {},
        {},
        lab_comment("orch-10-1-toobig")}},
      {"squeue-cancelled.txt",
       {"8", "orch-5-1-cancel", "CANCELLED", "", kN1, {}, {}, lab_comment("orch-5-1-cancel")}},
      {"squeue-cancelled-pending.txt",
       {"10",
        "orch-7-1-pend",
        "CANCELLED",
        kNodesDown,
        kNone,
        {},
        {},
        lab_comment("orch-7-1-pend")}},
      {"squeue-timeout.txt",
       {"5",
        "orch-2-1-timeout",
        "TIMEOUT",
        "TimeLimit",
        kN1,
        {},
        {},
        lab_comment("orch-2-1-timeout")}},
      {"squeue-node-fail.txt",
       {"11",
        "orch-8-1-nodefail",
        "NODE_FAIL",
        "NodeDown",
        {"alpha-n3"},
        {},
        {},
        lab_comment("orch-8-1-nodefail")}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    expect_jobs(parse_squeue(fixture(std::string("lab-22.05/") + c.file)), {c.want});
  }
  expect_jobs(parse_squeue(fixture("lab-22.05/squeue-unknown-token.txt")), {});
}

TEST(slurm_parse_squeue, Lab2205HostileNameStaysInTheComment) {
  // The job's name as an earlier version of the comment carried it: quotes, $(), backticks,
  // a newline (sent as '?'), '|' and a fake "JobState=RUNNING". squeue puts the comment last.
  expect_jobs(parse_squeue(fixture("lab-22.05/squeue-hostile-name.txt")),
              {{"14",
                "orch-11-1-hostile",
                "COMPLETED",
                "",
                kN1,
                {},
                {},
                "orchestrate token=orch-11-1-hostile name=evil \"name\" 'q' $(touch "
                "/tmp/slurmcap/pwned1) `touch /tmp/slurmcap/pwned2`?line2 | pipe "
                "JobState=RUNNING"}});
}

TEST(slurm_parse_squeue, Docs2411LiveAndEndedStates) {
  auto live = parse_squeue(fixture("docs-24.x/squeue-live-states-24.11.txt"));
  ASSERT_TRUE(live.ok()) << live.error().message;
  std::vector<std::string> states;
  for (const auto& j : *live) states.push_back(j.state);
  EXPECT_THAT(states,
              ElementsAre("CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD",
                          "RESIZING", "SUSPENDED", "STOPPED", "SPECIAL_EXIT", "SIGNALING",
                          "STAGE_OUT", "COMPLETING", "PENDING"));
  EXPECT_EQ((*live)[0].nodes, (std::vector<std::string>{"gpu-a-001", "gpu-a-002"}));
  EXPECT_EQ((*live)[12].reason, "ReqNodeNotAvail, UnavailableNodes:gpu-a-[011-012]");
  EXPECT_EQ((*live)[12].comment, "orchestrate token=orch-1-13-live name=pretrain 7b");

  auto ended = parse_squeue(fixture("docs-24.x/squeue-ended-states-24.11.txt"));
  ASSERT_TRUE(ended.ok()) << ended.error().message;
  states.clear();
  for (const auto& j : *ended) states.push_back(j.state);
  EXPECT_THAT(states, ElementsAre("OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "FAILED",
                                  "FAILED", "REVOKED", "NODE_FAIL"));
  EXPECT_EQ((*ended)[4].reason, "RaisedSignal:9(Killed)");
  EXPECT_EQ((*ended)[5].reason, "RaisedSignal:10(User defined signal 1)");
  EXPECT_EQ((*ended)[7].nodes, (std::vector<std::string>{"gpu-a-001", "gpu-a-002", "gpu-b-017"}));
}

// ---- a poll round: many tokens in one squeue / sacct --------------------------------------

const std::vector<std::string> kRoundTokens = {"orch-1-1-5f3a9c", "orch-2-1-5f3a9d",
                                               "orch-3-1-5f3a9e", "orch-4-1-5f3a9f",
                                               "orch-5-1-5f3aa0", "orch-6-1-5f3aa1"};

TEST(slurm_parse_many, ArgvListsEveryName) {
  EXPECT_THAT(squeue_by_names_argv({"orch-1-1-a", "orch-2-1-b", "orch-3-1-c"}),
              ElementsAre("squeue", "-h", "-t", "all", "--name=orch-1-1-a,orch-2-1-b,orch-3-1-c",
                          "-o", "%i|%j|%T|%r|%N|%k"));
  EXPECT_THAT(
      squeue_by_names_argv({"orch-1-1-a"}),
      ElementsAre("squeue", "-h", "-t", "all", "--name=orch-1-1-a", "-o", "%i|%j|%T|%r|%N|%k"));
  EXPECT_THAT(sacct_by_names_argv({"orch-1-1-a", "orch-2-1-b"}),
              ElementsAre("sacct", "-n", "-P", "-X", "--starttime=now-30days",
                          "--name=orch-1-1-a,orch-2-1-b",
                          "--format=JobID,JobName,State,ExitCode,NodeList,Reason,Comment"));
}

TEST(slurm_parse_many, Lab2205SqueueForSixTokens) {
  // Running, held, failed, completed, a token submitted three times (two cancelled, then job 10
  // running, listed last, after lower ids), and a token Slurm never saw.
  auto jobs = parse_squeue(fixture("lab-22.05/squeue-many-names.txt"));
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 7u);
  auto newest = newest_by_name(std::move(*jobs), kRoundTokens);
  ASSERT_EQ(newest.size(), 5u);
  EXPECT_EQ(newest.count("orch-6-1-5f3aa1"), 0u);
  const JobRecord& running = newest.at("orch-1-1-5f3a9c");
  EXPECT_EQ(running.job_id, "1");
  EXPECT_EQ(running.state, "RUNNING");
  EXPECT_EQ(running.nodes, kN1);
  EXPECT_EQ(map_job_state(running).phase, RunPhase::running);
  const JobRecord& held = newest.at("orch-2-1-5f3a9d");
  EXPECT_EQ(held.state, "PENDING");
  EXPECT_EQ(held.reason, "JobHeldUser");
  EXPECT_TRUE(held.nodes.empty());
  EXPECT_EQ(map_job_state(held).phase, RunPhase::queued);
  EXPECT_EQ(newest.at("orch-3-1-5f3a9e").state, "FAILED");
  EXPECT_EQ(newest.at("orch-3-1-5f3a9e").reason, "NonZeroExitCode");
  EXPECT_EQ(newest.at("orch-4-1-5f3a9f").state, "COMPLETED");
  // Job 10 beats 5 and 6: ids compare as numbers, not as text ("10" < "5" as text).
  const JobRecord& again = newest.at("orch-5-1-5f3aa0");
  EXPECT_EQ(again.job_id, "10");
  EXPECT_EQ(again.state, "RUNNING");
  EXPECT_EQ(again.comment, "orchestrate token=orch-5-1-5f3aa0 name=a|b");
}

TEST(slurm_parse_many, Lab2205SacctForSixTokens) {
  // sacct with accounting (slurmdbd): the held job is not listed yet (never eligible), the
  // never-seen token is absent, the token with three jobs has three lines.
  auto jobs = parse_sacct(fixture("lab-22.05/sacct-many-names.txt"));
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 6u);
  auto newest = newest_by_name(std::move(*jobs), kRoundTokens);
  ASSERT_EQ(newest.size(), 4u);
  EXPECT_EQ(newest.count("orch-2-1-5f3a9d"), 0u);
  EXPECT_EQ(newest.count("orch-6-1-5f3aa1"), 0u);
  EXPECT_EQ(newest.at("orch-1-1-5f3a9c").state, "RUNNING");
  const JobRecord& failed = newest.at("orch-3-1-5f3a9e");
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.signal, 0);
  JobPhase phase = map_job_state(failed);
  EXPECT_EQ(phase.phase, RunPhase::exited);
  ASSERT_TRUE(phase.exit.has_value());
  EXPECT_EQ(phase.exit->exit_code, 3);
  EXPECT_EQ(newest.at("orch-4-1-5f3a9f").state, "COMPLETED");
  EXPECT_EQ(newest.at("orch-5-1-5f3aa0").job_id, "10");
  EXPECT_EQ(newest.at("orch-5-1-5f3aa0").state, "RUNNING");
}

TEST(slurm_parse_many, NewestByNameIgnoresOtherNamesAndComparesIdsAsNumbers) {
  std::vector<JobRecord> jobs(5);
  jobs[0] = {.job_id = "99", .name = "orch-1-1-a", .state = "CANCELLED"};
  jobs[1] = {.job_id = "100", .name = "orch-1-1-a", .state = "RUNNING"};
  jobs[2] = {.job_id = "98", .name = "orch-1-1-a", .state = "FAILED"};
  jobs[3] = {.job_id = "7", .name = "someone-else", .state = "RUNNING"};
  jobs[4] = {.job_id = "8", .name = "orch-2-1-b", .state = "PENDING"};
  auto newest = newest_by_name(jobs, {"orch-1-1-a", "orch-2-1-b", "orch-3-1-c"});
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest.at("orch-1-1-a").job_id, "100");
  EXPECT_EQ(newest.at("orch-2-1-b").job_id, "8");
  EXPECT_TRUE(is_newer_job(jobs[1], jobs[0]));
  EXPECT_FALSE(is_newer_job(jobs[0], jobs[1]));
  EXPECT_TRUE(newest_by_name({}, {"orch-1-1-a"}).empty());
}

// ---- scontrol show job -o -----------------------------------------------------------------

TEST(slurm_parse_scontrol, Lab2205EveryState) {
  struct Case {
    const char* file;
    Want want;
  };
  const Case cases[] = {
      {"scontrol-running-2-nodes.txt",
       {"9", "orch-6-1-run", "RUNNING", "", kN12, 0, 0, lab_comment("orch-6-1-run")}},
      {"scontrol-pending-resources.txt",
       {"10", "orch-7-1-pend", "PENDING", "Resources", kNone, 0, 0, lab_comment("orch-7-1-pend")}},
      {"scontrol-pending-nodes-down.txt",
       {"10", "orch-7-1-pend", "PENDING",
        "Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_"
        "partitions",
        kNone, 0, 0, lab_comment("orch-7-1-pend")}},
      {"scontrol-completed.txt",
       {"4", "orch-1-1-ok", "COMPLETED", "", kN1, 0, 0, lab_comment("orch-1-1-ok")}},
      {"scontrol-failed-exit-3.txt",
       {"6", "orch-3-1-fail", "FAILED", "NonZeroExitCode", kN1, 3, 0,
        lab_comment("orch-3-1-fail")}},
      {"scontrol-failed-sigkill.txt",
       {"7", "orch-4-1-sig", "FAILED", "JobLaunchFailure", kN1, 0, 9, lab_comment("orch-4-1-sig")}},
      {"scontrol-failed-usr1.txt",
       {"17", "orch-13-1-sig", "FAILED", "JobLaunchFailure", kN1, 0, 10,
        lab_comment("orch-13-1-sig")}},
      {"scontrol-launch-failed.txt",
       {"12", "orch-9-1-nolog", "FAILED", "JobLaunchFailure", kN1, 0, 53,
        lab_comment("orch-9-1-nolog")}},
      {"scontrol-refused-at-submit.txt",
       {"13", "orch-10-1-toobig", "FAILED", "BadConstraints", kNone, 0, 1,
        lab_comment("orch-10-1-toobig")}},
      {"scontrol-cancelled.txt",
       {"8", "orch-5-1-cancel", "CANCELLED", "", kN1, 143, 0, lab_comment("orch-5-1-cancel")}},
      {"scontrol-cancelled-pending.txt",
       {"10", "orch-7-1-pend", "CANCELLED",
        "Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_"
        "partitions",
        kNone, 0, 0, lab_comment("orch-7-1-pend")}},
      {"scontrol-timeout.txt",
       {"5", "orch-2-1-timeout", "TIMEOUT", "TimeLimit", kN1, 0, 15,
        lab_comment("orch-2-1-timeout")}},
      {"scontrol-node-fail.txt",
       {"11",
        "orch-8-1-nodefail",
        "NODE_FAIL",
        "NodeDown",
        {"alpha-n3"},
        0,
        0,
        lab_comment("orch-8-1-nodefail")}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    expect_jobs(parse_scontrol_jobs(fixture(std::string("lab-22.05/") + c.file)), {c.want});
  }
}

TEST(slurm_parse_scontrol, Lab2205RawCapturesOfTheLabFixtureSet) {
  // The underscore-named raw captures in lab-22.05 (see its README.md): scripts on stdin,
  // `scontrol show job -o <id>`, no comment.
  struct Case {
    const char* file;
    const char* id;
    const char* state;
    const char* reason;
    std::vector<std::string> nodes;
    int code;
    int signal;
  };
  const Case cases[] = {
      {"scontrol_show_job_running.txt", "2", "RUNNING", "", kN1, 0, 0},
      {"scontrol_show_job_pending_resources.txt", "3", "PENDING", "Resources", kNone, 0, 0},
      {"scontrol_show_job_completed.txt", "4", "COMPLETED", "", kN1, 0, 0},
      {"scontrol_show_job_failed_exit3.txt", "5", "FAILED", "NonZeroExitCode", {"alpha-n2"}, 3, 0},
      {"scontrol_show_job_cancelled.txt", "6", "CANCELLED", "", kN1, 0, 15},
      {"scontrol_show_job_node_fail.txt", "7", "NODE_FAIL", "NodeDown", {"alpha-n2"}, 0, 15},
      {"scontrol_show_job_requeued_after_node_down.txt", "8", "PENDING", "BeginTime", kNone, 0, 0},
      {"scontrol_show_job_timeout.txt", "1", "TIMEOUT", "TimeLimit", kN1, 0, 15},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    auto jobs = parse_scontrol_jobs(fixture(std::string("lab-22.05/") + c.file));
    ASSERT_TRUE(jobs.ok()) << jobs.error().message;
    ASSERT_EQ(jobs->size(), 1u);
    const JobRecord& j = jobs->front();
    EXPECT_EQ(j.job_id, c.id);
    EXPECT_EQ(j.state, c.state);
    EXPECT_EQ(j.reason, c.reason);
    EXPECT_EQ(j.nodes, c.nodes);
    EXPECT_EQ(j.exit_code, c.code);
    EXPECT_EQ(j.signal, c.signal);
    EXPECT_EQ(j.comment, "");
  }
  auto id = parse_sbatch_job_id(fixture("lab-22.05/sbatch_parsable.txt"));
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "1");
}

TEST(slurm_parse_scontrol, Lab2205InvalidJobIdMeansNoJobs) {
  // scontrol prints it on stderr with exit code 1; an adapter may hand either stream over.
  expect_jobs(parse_scontrol_jobs(fixture("lab-22.05/scontrol-invalid-job-id.txt")), {});
  expect_jobs(parse_scontrol_jobs(fixture("lab-22.05/scontrol-invalid-job-id.stderr.txt")), {});
}

TEST(slurm_parse_scontrol, Lab2205HostileCommentCannotFakeTheState) {
  // The comment holds " JobState=RUNNING" and sits after the real JobState=COMPLETED.
  expect_jobs(parse_scontrol_jobs(fixture("lab-22.05/scontrol-hostile-name.txt")),
              {{"14", "orch-11-1-hostile", "COMPLETED", "", kN1, 0, 0,
                "orchestrate token=orch-11-1-hostile name=evil \"name\" 'q' $(touch "
                "/tmp/slurmcap/pwned1) `touch /tmp/slurmcap/pwned2`?line2 | pipe "
                "JobState=RUNNING"}});
}

TEST(slurm_parse_scontrol, Docs2411NewKeysFailedNodeOomAndSignals) {
  expect_jobs(parse_scontrol_jobs(fixture("docs-24.x/scontrol-node-fail-24.11.txt")),
              {{"401",
                "orch-4-1-nf",
                "NODE_FAIL",
                "NodeDown",
                {"gpu-a-001", "gpu-a-002", "gpu-b-017"},
                0,
                0,
                "orchestrate token=orch-4-1-nf name=pretrain 7b"}});
  expect_jobs(parse_scontrol_jobs(fixture("docs-24.x/scontrol-oom-and-signal-24.11.txt")),
              {{"402",
                "orch-4-2-oom",
                "OUT_OF_MEMORY",
                "OutOfMemory",
                {"gpu-a-001"},
                0,
                125,
                "orchestrate token=orch-4-2-oom name=pretrain 7b"},
               {"403",
                "orch-4-3-sig",
                "FAILED",
                "RaisedSignal:10(User_defined_signal_1)",
                {"gpu-a-002"},
                0,
                10,
                "orchestrate token=orch-4-3-sig name=pretrain 7b"}});
}

TEST(slurm_parse_scontrol, Docs2511SubmitLineWithKeysInsideIsOneValue) {
  // 25.11 prints the whole sbatch line (SubmitLine=) before WorkDir and the comment.
  expect_jobs(parse_scontrol_jobs(fixture("docs-24.x/scontrol-preempted-25.11.txt")),
              {{"501",
                "orch-5-1-new",
                "PREEMPTED",
                "",
                {"gpu-a-003", "gpu-a-004"},
                0,
                15,
                "orchestrate token=orch-5-1-new name=evil JobState:RUNNING ExitCode:0:0"}});
}

TEST(slurm_parse_scontrol, ValuesWithSpacesAndAKeyInsideAFreeTextValue) {
  const std::string line =
      "JobId=77 JobName=orch-1-1-x UserId=u(1) JobState=RUNNING Reason=None Dependency=(null) "
      "ExitCode=0:0 NodeList=n[1-2] BatchHost=n1 Command=/a b/job.sh WorkDir=/a b/work "
      "Comment=x StdOut=fake y  StdErr=/a b/out.log StdIn=/dev/null StdOut=/a b/out.log Power= \n";
  auto jobs = parse_scontrol_jobs(line);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 1u);
  // StdOut had not been printed yet, so it ends the comment: the comment is cut, nothing else.
  EXPECT_EQ((*jobs)[0].comment, "x");
  EXPECT_EQ((*jobs)[0].state, "RUNNING");
  EXPECT_EQ((*jobs)[0].nodes, (std::vector<std::string>{"n1", "n2"}));
}

// ---- sacct --------------------------------------------------------------------------------

TEST(slurm_parse_sacct, Lab2205EveryState) {
  struct Case {
    const char* file;
    Want want;
  };
  const Case cases[] = {
      {"sacct-running-2-nodes.txt", {"9", "orch-6-1-run", "RUNNING", "", kN12, 0, 0, ""}},
      {"sacct-pending-resources.txt", {"10", "orch-7-1-pend", "PENDING", "", kNone, 0, 0, ""}},
      {"sacct-completed.txt", {"4", "orch-1-1-ok", "COMPLETED", "", kN1, 0, 0, ""}},
      {"sacct-failed-exit-3.txt", {"6", "orch-3-1-fail", "FAILED", "", kN1, 3, 0, ""}},
      {"sacct-failed-sigkill.txt", {"7", "orch-4-1-sig", "FAILED", "", kN1, 0, 9, ""}},
      {"sacct-launch-failed.txt", {"12", "orch-9-1-nolog", "FAILED", "", kN1, 0, 53, ""}},
      {"sacct-refused-at-submit.txt", {"13", "orch-10-1-toobig", "FAILED", "", kNone, 1, 0, ""}},
      {"sacct-cancelled.txt", {"8", "orch-5-1-cancel", "CANCELLED", "", kN1, 0, 0, "", "0"}},
      {"sacct-cancelled-pending.txt",
       {"10", "orch-7-1-pend", "CANCELLED", "", kNone, 0, 0, "", "0"}},
      {"sacct-timeout.txt", {"5", "orch-2-1-timeout", "TIMEOUT", "", kN1, 0, 0, ""}},
      {"sacct-node-fail.txt", {"11", "orch-8-1-nodefail", "NODE_FAIL", "", {"alpha-n3"}, 0, 0, ""}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    expect_jobs(parse_sacct(fixture(std::string("lab-22.05/") + c.file)), {c.want});
  }
  expect_jobs(parse_sacct(fixture("lab-22.05/sacct-unknown-token.txt")), {});
}

TEST(slurm_parse_sacct, Docs2411StatesCancelledByAUserAndACommentWithAPipe) {
  auto jobs = parse_sacct(fixture("docs-24.x/sacct-states-24.11.txt"));
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 12u);
  std::vector<std::string> states;
  for (const auto& j : *jobs) states.push_back(j.state);
  EXPECT_THAT(states, ElementsAre("OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
                                  "CANCELLED", "REQUEUED", "SUSPENDED", "REVOKED", "NODE_FAIL",
                                  "TIMEOUT", "RESIZING", "PENDING"));
  EXPECT_EQ((*jobs)[0].signal, 125);
  EXPECT_EQ((*jobs)[4].cancelled_by, "1000");
  EXPECT_EQ((*jobs)[4].signal, 15);
  EXPECT_EQ((*jobs)[4].comment, "orchestrate token=orch-3-5-acct name=a | b");
  EXPECT_EQ((*jobs)[8].nodes.size(), 4u);
  EXPECT_EQ((*jobs)[8].exit_code, 1);
  EXPECT_EQ((*jobs)[11].reason, "Priority");
  EXPECT_TRUE((*jobs)[3].nodes.empty());
}

TEST(slurm_parse_sacct, AccountingDisabledIsRecognised) {
  EXPECT_TRUE(is_accounting_disabled(fixture("lab-22.05/sacct-accounting-disabled.stderr.txt")));
  EXPECT_EQ(fixture("lab-22.05/sacct-accounting-disabled.txt"), "");  // stdout was empty
  EXPECT_FALSE(is_accounting_disabled(fixture("lab-22.05/sacct-completed.txt")));
  EXPECT_FALSE(is_accounting_disabled(""));
}

// A cluster whose slurmctld is down: the site is silent, which is not a failed job.
TEST(slurm_parse_errors, ControllerDownIsRecognised) {
  EXPECT_TRUE(is_controller_unreachable(fixture("lab-22.05/squeue-controller-down.stderr.txt")));
  EXPECT_TRUE(is_controller_unreachable(fixture("lab-22.05/sinfo-controller-down.stderr.txt")));
  EXPECT_TRUE(is_controller_unreachable(
      "squeue: error: slurm_receive_msg: Socket timed out on send/recv operation"));
  EXPECT_FALSE(is_controller_unreachable(fixture("lab-22.05/sbatch-refused.stderr.txt")));
  EXPECT_FALSE(is_controller_unreachable(""));
}

}  // namespace
}  // namespace orch::slurm
