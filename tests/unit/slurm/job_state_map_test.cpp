// map_job_state for every job state in Slurm's documentation (job_state_codes, squeue/sacct
// JOB STATE CODES, 22.05 to 26.05), and on the records parsed from the lab captures.
#include <gmock/gmock.h>

#include <csignal>
#include <string>
#include <vector>

#include "adapters/slurm/slurm_parse.h"
#include "tests/unit/slurm/fixture.h"

namespace orch::slurm {
namespace {

using testing::fixture;
using ::testing::HasSubstr;

JobRecord job(std::string state, std::optional<int> code = std::nullopt,
              std::optional<int> signal = std::nullopt, std::string reason = "",
              std::vector<std::string> nodes = {}) {
  JobRecord j;
  j.job_id = "1";
  j.name = "orch-1-1-x";
  j.state = std::move(state);
  j.exit_code = code;
  j.signal = signal;
  j.reason = std::move(reason);
  j.nodes = std::move(nodes);
  return j;
}

TEST(slurm_parse_job_state, QueuedStates) {
  for (const char* s :
       {"PENDING", "CONFIGURING", "POWER_UP_NODE", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD",
        "SPECIAL_EXIT", "RESV_DEL_HOLD", "RESIZING", "SUSPENDED", "STOPPED"}) {
    JobPhase p = map_job_state(job(s, 0, 0));
    EXPECT_EQ(p.phase, RunPhase::queued) << s;
    EXPECT_FALSE(p.exit.has_value()) << s;
    EXPECT_TRUE(p.note.empty()) << s;
  }
}

TEST(slurm_parse_job_state, APendingJobsReasonIsItsReasonForWaitingInSlurmsWords) {
  EXPECT_EQ(map_job_state(job("PENDING", 0, 0, "Resources")).waiting,
            "Slurm: PENDING (Resources: the resources it asks for are not available, e.g. used "
            "by other jobs)");
  EXPECT_EQ(map_job_state(job("PENDING", 0, 0, "QOSMaxGRESPerUser")).waiting,
            "Slurm: PENDING (QOSMaxGRESPerUser: it asks for more than a limit of its QOS allows)");
  // A reason the page's common ones do not cover is shown as Slurm writes it.
  EXPECT_EQ(map_job_state(job("PENDING", 0, 0, "JobHeldAdmin")).waiting,
            "Slurm: PENDING (JobHeldAdmin)");
  EXPECT_EQ(map_job_state(job("PENDING", 0, 0, "")).waiting, "");
  EXPECT_EQ(map_job_state(job("RUNNING", 0, 0, "Resources")).waiting, "");
}

TEST(slurm_parse_job_state, RunningStates) {
  for (const char* s : {"RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING"}) {
    JobPhase p = map_job_state(job(s, 0, 0));
    EXPECT_EQ(p.phase, RunPhase::running) << s;
    EXPECT_FALSE(p.exit.has_value()) << s;
    EXPECT_TRUE(p.note.empty()) << s;
  }
}

struct Exited {
  JobRecord record;
  std::optional<int> code;
  std::optional<int> signal;
  std::optional<ExitCause> cause;
  bool node_lost;
  std::string detail;
};

TEST(slurm_parse_job_state, TerminalStates) {
  JobRecord cancelled = job("CANCELLED", 0, 15);
  cancelled.cancelled_by = "1000";
  const std::vector<Exited> cases = {
      {job("COMPLETED", 0, 0), 0, {}, {}, false, "COMPLETED"},
      {job("COMPLETED"), 0, {}, {}, false, "COMPLETED"},  // squeue
      {job("FAILED", 3, 0, "NonZeroExitCode"), 3, {}, {}, false, "FAILED (NonZeroExitCode)"},
      {job("FAILED", 0, 9, "RaisedSignal:9(Killed)"),
       {},
       9,
       {},
       false,
       "FAILED (RaisedSignal:9(Killed))"},
      {job("FAILED", 0, 9, "JobLaunchFailure"), {}, 9, {}, false, "FAILED (JobLaunchFailure)"},
      {job("FAILED", 0, 1, "BadConstraints"),
       {},
       1,
       ExitCause::launch_failed,
       false,
       "FAILED (BadConstraints)"},
      {job("FAILED", 0, 0), {}, {}, {}, false, "FAILED"},
      {job("FAILED"), {}, {}, {}, false, "FAILED"},  // squeue: ask scontrol
      {cancelled, {}, 15, ExitCause::killed_by_signal, false, "CANCELLED by 1000"},
      {job("CANCELLED", 143, 0), 143, {}, ExitCause::killed_by_signal, false, "CANCELLED"},
      {job("CANCELLED", 0, 0), {}, {}, ExitCause::killed_by_signal, false, "CANCELLED"},
      {job("TIMEOUT", 0, 15, "TimeLimit"),
       {},
       15,
       ExitCause::time_limit,
       false,
       "TIMEOUT (TimeLimit)"},
      {job("DEADLINE", 0, 0, "DeadLine"),
       {},
       {},
       ExitCause::time_limit,
       false,
       "DEADLINE (DeadLine)"},
      {job("PREEMPTED", 0, 15), {}, 15, ExitCause::preempted, false, "PREEMPTED"},
      {job("OUT_OF_MEMORY", 0, 125, "OutOfMemory"),
       {},
       125,
       ExitCause::out_of_memory,
       false,
       "OUT_OF_MEMORY (OutOfMemory)"},
      {job("NODE_FAIL", 0, 0, "NodeDown", {"alpha-n1"}),
       {},
       {},
       ExitCause::node_lost,
       true,
       "NODE_FAIL (NodeDown) on alpha-n1"},
      {job("BOOT_FAIL", 0, 0, "", {"gpu-a-005"}),
       {},
       {},
       ExitCause::node_lost,
       true,
       "BOOT_FAIL on gpu-a-005"},
      {job("REVOKED", 0, 0), {}, {}, {}, false, "REVOKED"},
      {job("LAUNCH_FAILED", 0, 0), {}, {}, ExitCause::launch_failed, false, "LAUNCH_FAILED"},
  };
  for (const Exited& c : cases) {
    SCOPED_TRACE(c.detail);
    JobPhase p = map_job_state(c.record);
    ASSERT_EQ(p.phase, RunPhase::exited);
    ASSERT_TRUE(p.exit.has_value());
    EXPECT_EQ(p.exit->exit_code, c.code);
    EXPECT_EQ(p.exit->signal, c.signal);
    EXPECT_EQ(p.exit->cause, c.cause);
    EXPECT_EQ(p.exit->node_lost, c.node_lost);
    EXPECT_EQ(p.exit->detail, c.detail);
  }
}

TEST(slurm_parse_job_state, NodeFailNamesAtMostEightNodes) {
  std::vector<std::string> nodes;
  for (int i = 1; i <= 10; ++i) nodes.push_back("n" + std::to_string(i));
  JobPhase p = map_job_state(job("NODE_FAIL", 0, 0, "NodeDown", nodes));
  ASSERT_TRUE(p.exit.has_value());
  EXPECT_EQ(p.exit->detail, "NODE_FAIL (NodeDown) on n1,n2,n3,n4,n5,n6,n7,n8 and 2 more");
}

TEST(slurm_parse_job_state, StateSpellingsOfTheOtherTools) {
  // sacct's "CANCELLED by 0" (when not split by the parser), a truncated "CANCELLED+", the
  // complete form "FAILED,LAUNCH_FAILED".
  EXPECT_EQ(map_job_state(job("CANCELLED by 0")).exit->cause, ExitCause::killed_by_signal);
  EXPECT_EQ(map_job_state(job("CANCELLED+")).phase, RunPhase::exited);
  EXPECT_EQ(map_job_state(job("FAILED,LAUNCH_FAILED", 2, 0)).exit->exit_code, 2);
}

TEST(slurm_parse_job_state, UnknownStatesAreTakenAsRunningAndSaySo) {
  for (const char* s : {"WARPING", "UPDATE_DB", "?", ""}) {
    JobPhase p = map_job_state(job(s));
    EXPECT_EQ(p.phase, RunPhase::running) << s;
    EXPECT_FALSE(p.exit.has_value()) << s;
    EXPECT_THAT(p.note, HasSubstr("unknown Slurm job state")) << s;
    EXPECT_THAT(p.note, HasSubstr("running")) << s;
  }
}

TEST(slurm_parse_job_state, LabCapturesEndToEnd) {
  // scontrol, which has the exit code, for each ended job of the lab.
  struct Case {
    const char* file;
    std::optional<int> code;
    std::optional<int> signal;
    std::optional<ExitCause> cause;
    std::string detail;
  };
  const Case cases[] = {
      {"scontrol-completed.txt", 0, {}, {}, "COMPLETED"},
      {"scontrol-failed-exit-3.txt", 3, {}, {}, "FAILED (NonZeroExitCode)"},
      {"scontrol-failed-sigkill.txt", {}, 9, {}, "FAILED (JobLaunchFailure)"},
      {"scontrol-launch-failed.txt", {}, 53, {}, "FAILED (JobLaunchFailure)"},
      {"scontrol-failed-usr1.txt", {}, 10, {}, "FAILED (JobLaunchFailure)"},
      {"scontrol-refused-at-submit.txt",
       {},
       1,
       ExitCause::launch_failed,
       "FAILED (BadConstraints)"},
      {"scontrol-cancelled.txt", 143, {}, ExitCause::killed_by_signal, "CANCELLED"},
      {"scontrol-timeout.txt", {}, 15, ExitCause::time_limit, "TIMEOUT (TimeLimit)"},
      {"scontrol-node-fail.txt", {}, {}, ExitCause::node_lost, "NODE_FAIL (NodeDown) on alpha-n3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    auto jobs = parse_scontrol_jobs(fixture(std::string("lab-22.05/") + c.file));
    ASSERT_TRUE(jobs.ok()) << jobs.error().message;
    ASSERT_EQ(jobs->size(), 1u);
    JobPhase p = map_job_state(jobs->front());
    ASSERT_EQ(p.phase, RunPhase::exited);
    EXPECT_EQ(p.exit->exit_code, c.code);
    EXPECT_EQ(p.exit->signal, c.signal);
    EXPECT_EQ(p.exit->cause, c.cause);
    EXPECT_EQ(p.exit->detail, c.detail);
  }
  auto sacct = parse_sacct(fixture("lab-22.05/sacct-cancelled.txt"));
  ASSERT_TRUE(sacct.ok());
  EXPECT_EQ(map_job_state(sacct->front()).exit->detail, "CANCELLED by 0");
}

}  // namespace
}  // namespace orch::slurm
