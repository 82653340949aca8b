// Issue 40, items 3 and 5, in make_batch_plan: the job's shell on the srun line (run for real
// by /bin/sh with the srun stand-in and this build's agent, as batch_script_test.cpp does) and
// its shape in the sbatch command line (read back through a real shell): CPUs per task, memory,
// and its own slurm options over the cluster's, where the cluster lets them through.
#include <gmock/gmock.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "adapters/slurm/batch_script.h"
#include "scheduler/model/job_shape.h"
#include "tests/unit/slurm/batch_fixture.h"
#include "tests/unit/slurm/process_test_util.h"

namespace orch::slurm {
namespace {

using namespace ::orch::slurm::batch_fixture;  // NOLINT(google-build-using-namespace)
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

LaunchRequest one_node_request() {
  LaunchRequest r;
  r.token = "orch-9-1-abc";
  r.job_id = 9;
  r.attempt_no = 1;
  r.job_name = "shape";
  r.command = "python train.py";
  r.nodes = 1;
  r.gpus_per_node = 8;
  return r;
}

ClusterSpec cluster(const std::string& root = "/shared/orch") {
  return basic_cluster(root);
}

std::vector<std::string> argv_for(const LaunchRequest& r, const ClusterSpec& c) {
  auto plan = make_batch_plan(r, c, kAgent);
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  return plan.ok() ? sbatch_argv_of(plan->submit_command) : std::vector<std::string>{};
}

// Runs the attempt's batch script once (a one-node job) in a fresh storage root; its output.
Outcome run_attempt(const TempDir& tmp, LaunchRequest r, const std::string& setup_file = "") {
  auto plan = make_batch_plan(r, cluster(tmp.path()), kAgent);
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  if (!plan.ok()) return {};
  EXPECT_EQ(run({"/bin/sh", "-c", plan->prepare_command}).status, 0);
  if (!setup_file.empty()) std::ofstream(plan->paths.work + "/env.sh") << setup_file;
  std::ofstream(plan->paths.script) << plan->script;
  return run({"/bin/sh", plan->paths.script}, slurmd_env("41"));
}

bool has_bash() {
  return run({"/bin/sh", "-c", "command -v bash"}).status == 0;
}

TEST(slurm_parse_batch_shape, SbatchGetsCpusMemoryAndTheJobsOptions) {
  LaunchRequest r = one_node_request();
  r.cpus_per_task = 12;
  r.memory_mb = 64 * 1024;
  r.slurm.partition = "big";
  r.slurm.reservation = "maint_1";
  r.slurm.constraint = "a100&ib";
  r.slurm.exclusive = true;
  ClusterSpec c = cluster();
  c.slurm.partition = "gpu";
  c.slurm.account = "proj-a";
  c.slurm.qos = "normal";
  const auto argv = argv_for(r, c);
  EXPECT_THAT(argv, Contains("--cpus-per-task=12"));
  EXPECT_THAT(argv, Contains("--mem=65536M"));
  EXPECT_THAT(argv, Contains("--partition=big"));  // the job's, over the cluster's
  EXPECT_THAT(argv, Not(Contains("--partition=gpu")));
  EXPECT_THAT(argv, Contains("--account=proj-a"));  // the cluster's, the job said nothing
  EXPECT_THAT(argv, Contains("--qos=normal"));
  EXPECT_THAT(argv, Contains("--reservation=maint_1"));
  EXPECT_THAT(argv, Contains("--constraint=a100&ib"));
  EXPECT_THAT(argv, Contains("--exclusive"));
}

TEST(slurm_parse_batch_shape, NothingSaidAddsNoShapeOption) {
  const auto argv = argv_for(one_node_request(), cluster());
  for (const char* option : {"--cpus-per-task", "--mem", "--exclusive", "--constraint",
                             "--reservation", "--partition", "--account", "--qos"}) {
    for (const auto& a : argv) EXPECT_THAT(a, Not(HasSubstr(option)));
  }
}

TEST(slurm_parse_batch_shape, TheClustersOwnShapeAndItsPinnedValuesStand) {
  LaunchRequest r = one_node_request();
  r.slurm.account = "proj-b";  // pinned below: the cluster's stands
  r.slurm.exclusive = false;   // allowed: the job's false wins over the cluster's true
  ClusterSpec c = cluster();
  c.slurm.account = "proj-a";
  c.slurm.constraint = "h100";
  c.slurm.exclusive = true;
  c.slurm.job_options = {{"account", SlurmOptionRule::pinned}};
  const auto argv = argv_for(r, c);
  EXPECT_THAT(argv, Contains("--account=proj-a"));
  EXPECT_THAT(argv, Contains("--constraint=h100"));
  EXPECT_THAT(argv, Not(Contains("--exclusive")));
}

// A launch read back from the outbox is held to the parser's byte rules again.
TEST(slurm_parse_batch_shape, HostileOptionsInALaunchAreRefused) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"constraint", "gpu --wrap=id"},
      {"account", "proj\nexit"},
      {"qos", "--qos=root"},
      {"partition", std::string("gpu\0x", 5)},
      {"reservation", "r;id"}};
  for (const auto& [name, value] : bad) {
    LaunchRequest r = one_node_request();
    if (name == "constraint") r.slurm.constraint = value;
    if (name == "account") r.slurm.account = value;
    if (name == "qos") r.slurm.qos = value;
    if (name == "partition") r.slurm.partition = value;
    if (name == "reservation") r.slurm.reservation = value;
    auto plan = make_batch_plan(r, cluster(), kAgent);
    ASSERT_FALSE(plan.ok()) << name;
    EXPECT_THAT(plan.error().message, HasSubstr("slurm." + name + " cannot be passed to sbatch"));
  }
  LaunchRequest r = one_node_request();
  r.shell = "zsh";
  EXPECT_FALSE(make_batch_plan(r, cluster(), kAgent).ok());
}

TEST(slurm_parse_batch_shape, SourceWorksUnderTheDefaultShell) {
  if (!has_bash()) GTEST_SKIP() << "no bash on this machine";
  TempDir tmp;
  LaunchRequest r = one_node_request();
  r.command = "source ./env.sh && echo \"greeting=$GREETING shell=${BASH_VERSION:+bash}\"";
  Outcome job = run_attempt(tmp, r, "export GREETING=hello\n");
  EXPECT_EQ(WEXITSTATUS(job.status), 0) << job.out;
  EXPECT_THAT(job.out, HasSubstr("greeting=hello shell=bash\n"));
}

TEST(slurm_parse_batch_shape, ShellShRunsThePosixShell) {
  TempDir tmp;
  LaunchRequest r = one_node_request();
  r.shell = "sh";
  r.command = "echo \"bash=${BASH_VERSION:-none}\"";
  Outcome job = run_attempt(tmp, r);
  EXPECT_EQ(WEXITSTATUS(job.status), 0) << job.out;
  // /bin/sh may be bash in POSIX mode on some systems, where BASH_VERSION is set.
  if (run({"/bin/sh", "-c", "[ -z \"$BASH_VERSION\" ]"}).status == 0) {
    EXPECT_THAT(job.out, HasSubstr("bash=none\n"));
  }
}

TEST(slurm_parse_batch_shape, BashLoginReadsTheLoginProfile) {
  if (!has_bash()) GTEST_SKIP() << "no bash on this machine";
  TempDir tmp;
  LaunchRequest r = one_node_request();
  r.shell = "bash-login";
  r.command = "shopt -q login_shell && echo login";
  Outcome job = run_attempt(tmp, r);
  EXPECT_EQ(WEXITSTATUS(job.status), 0) << job.out;
  EXPECT_THAT(job.out, HasSubstr("login\n"));
}

// The shell words themselves, run with a PATH where no bash can be found: the default falls
// back to sh; an explicit bash fails with a message, never running under sh.
TEST(slurm_parse_batch_shape, ANodeWithoutBash) {
  TempDir tmp;
  const std::vector<std::pair<std::string, std::string>> no_bash = {{"PATH", tmp.path()}};
  Outcome fallback = run(job_shell_argv("", "echo ran"), no_bash);
  EXPECT_EQ(WEXITSTATUS(fallback.status), 0);
  EXPECT_EQ(fallback.out, "ran\n");
  for (const char* shell : {"bash", "bash-login"}) {
    Outcome refused = run(job_shell_argv(shell, "echo ran"), no_bash);
    EXPECT_TRUE(WIFEXITED(refused.status));
    EXPECT_EQ(WEXITSTATUS(refused.status), 127) << shell;
    EXPECT_EQ(refused.out, "") << shell;
  }
}

TEST(slurm_parse_batch_shape, TheCommandIsOneArgumentUnderEveryShell) {
  const std::string command = "printf '%s|' \"$0\" a\\ b 'c;d' \"$(echo e)\"";
  for (const char* shell : {"", "sh", "bash", "bash-login"}) {
    if (std::string(shell).rfind("bash", 0) == 0 && !has_bash()) continue;
    Outcome o = run(job_shell_argv(shell, command));
    EXPECT_EQ(WEXITSTATUS(o.status), 0) << shell;
    EXPECT_THAT(o.out, HasSubstr("|a b|c;d|e|")) << shell;
  }
}

// Issue 44: the job's topology hint reaches sbatch as --switches (at most that many leaf
// switches, waited for up to switches_wait_s); a hint for Kueue alone adds nothing.
TEST(slurm_parse_batch_shape, ATopologyHintWithSwitchesAsksSbatchForThem) {
  LaunchRequest r = one_node_request();
  r.topology.switches = 1;
  r.topology.switches_wait_s = 600;
  EXPECT_THAT(argv_for(r, cluster()), Contains("--switches=1@0:10:00"));
  r.topology = TopologyHint{"cloud.provider.com/topology-block", true, 0, 0};
  for (const auto& word : argv_for(r, cluster())) EXPECT_THAT(word, Not(HasSubstr("--switches")));
}

}  // namespace
}  // namespace orch::slurm
