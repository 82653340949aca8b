// make_batch_plan: the batch script and the sbatch command line. No Slurm: the script is run by
// /bin/sh the way slurmd would run it (SLURM_JOB_ID set), its tasks under the real agent of this
// build, with `srun` a stand-in on PATH (tests/unit/slurm/srun_stand_in.sh: it starts each task
// with the variables srun sets and passes signals on; the real srun runs in the Slurm lab tests),
// and the submit command by /bin/sh with `sbatch` replaced by a shell function that prints its
// argv, which proves the quoting.
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/task_events.h"
#include "adapters/ssh/shell_quote.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/model/launch_contract.h"
#include "tests/unit/slurm/batch_fixture.h"
#include "tests/unit/slurm/process_test_util.h"

namespace orch::slurm {
namespace {

namespace fs = std::filesystem;
using namespace ::orch::slurm::batch_fixture;  // NOLINT(google-build-using-namespace)
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> shells() {
  std::vector<std::string> s = {"/bin/sh"};
  if (access("/bin/bash", X_OK) == 0) s.emplace_back("/bin/bash");
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The job's command under the default shell (job_shell_argv), each word quoted, as srun gets it.
std::string shell_words(const std::string& command) {
  std::string out;
  for (const auto& word : job_shell_argv("", command)) out += " " + shell_quote(word).value();
  return out;
}

TEST(slurm_parse_run_paths, Layout) {
  RunPaths p = run_paths("/shared/orch", "orch-1-1-a");
  EXPECT_EQ(p.dir, "/shared/orch/runs/orch-1-1-a");
  EXPECT_EQ(p.script, "/shared/orch/runs/orch-1-1-a/job.sh");
  EXPECT_EQ(p.output, "/shared/orch/runs/orch-1-1-a/output.log");
  EXPECT_EQ(p.job_id, "/shared/orch/runs/orch-1-1-a/job_id");
  EXPECT_EQ(p.work, "/shared/orch/runs/orch-1-1-a/work");
  EXPECT_EQ(run_paths("/shared/orch//", "t").dir, "/shared/orch/runs/t");
  EXPECT_EQ(run_paths("/", "t").dir, "/runs/t");
}

TEST(slurm_parse_batch_plan, SbatchOptionsAsDocumented) {
  LaunchRequest r = basic_request();
  r.exclude_nodes = {"gpu-a-003", "gpu-b-017"};
  r.on_node = "gpu-a-001";  // resuming from that node's own copy (tiered checkpoints)
  r.include_nodes = {"gpu-a-002", "gpu-a-001"};  // and a hot spare (each node once)
  ClusterSpec c = basic_cluster();
  c.slurm.partition = "gpu";
  c.slurm.account = "team";
  c.slurm.qos = "high";
  c.slurm.gres = "gpu:h100";
  c.slurm.time_limit = "2-00:00:00";
  c.slurm.pre_term_signal = "USR1";
  c.slurm.pre_term_s = 120;
  auto plan = plan_of(r, c);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const std::string d = "/shared/orch/runs/orch-7-2-5f3a9c";
  EXPECT_EQ(plan->paths.script, d + "/job.sh");
  EXPECT_THAT(sbatch_argv_of(plan->submit_command),
              ElementsAre("sbatch", "--parsable", "--job-name=orch-7-2-5f3a9c",
                          "--comment=orchestrate token=orch-7-2-5f3a9c name=pretrain",
                          "--output=" + d + "/output.log", "--error=" + d + "/output.log",
                          "--open-mode=append", "--chdir=" + d + "/work", "--nodes=2",
                          "--ntasks-per-node=1", "--gres=gpu:h100:8", "--partition=gpu",
                          "--account=team", "--qos=high", "--time=2-00:00:00",
                          "--exclude=gpu-a-003,gpu-b-017", "--nodelist=gpu-a-001,gpu-a-002",
                          "--signal=B:USR1@120", "--no-requeue", d + "/job.sh"));
  // One round trip: the directories, the gang file for the observer, and the agent's size.
  EXPECT_EQ(plan->prepare_command, "'mkdir' '-p' '--' '" + d + "' '" + d + "/work' '" + d +
                                       "/tasks' '" ORCH_BIN_DIR "' && 'printf' '%s\\n' '" +
                                       gang_file_line(r) + "' >'" + d +
                                       "/gang' && { 'test' '-x' '" + kAgent +
                                       "' && 'stat' '-c' '%s' '--' '" + kAgent + "' || :; }");
}

// A gang's survivors and the hot spares it takes are nodes it must get: never more than it has.
TEST(slurm_parse_batch_plan, MoreNodesToGetThanTheJobHasIsRefused) {
  LaunchRequest r = basic_request();
  r.include_nodes = {"gpu-a-001", "gpu-a-002", "gpu-a-003"};
  auto plan = plan_of(r, basic_cluster());
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.error().message, HasSubstr("names 3 nodes it must get, more than its 2"));
  r.include_nodes = {"gpu-a-001", "bad,name"};
  EXPECT_FALSE(plan_of(r, basic_cluster()).ok());
}

// A job's time_limit (backfill) goes to Slurm in whole minutes, rounded up, instead of the
// cluster's: Slurm knows when the job ends, and the brain stops it first (from its placement).
TEST(slurm_parse_batch_plan, TheJobsTimeLimitWinsOverTheClustersInWholeMinutes) {
  LaunchRequest r = basic_request();
  r.time_limit_s = 5401;
  ClusterSpec c = basic_cluster();
  c.slurm.time_limit = "2-00:00:00";
  auto plan = plan_of(r, c);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const auto argv = sbatch_argv_of(plan->submit_command);
  EXPECT_THAT(argv, ::testing::Contains("--time=91"));
  EXPECT_THAT(argv, ::testing::Not(::testing::Contains("--time=2-00:00:00")));
}

TEST(slurm_parse_batch_plan, OptionalOptionsAreLeftOut) {
  LaunchRequest r = basic_request();
  r.gpus_per_node = 0;
  ClusterSpec c = basic_cluster();
  c.slurm.pre_term_s = 0;
  auto plan = plan_of(r, c);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto argv = sbatch_argv_of(plan->submit_command);
  ASSERT_GE(argv.size(), 3u);
  for (const auto& a : argv) {
    for (const char* absent :
         {"--gres", "--partition", "--account", "--qos", "--time", "--exclude", "--signal"}) {
      EXPECT_THAT(a, ::testing::Not(StartsWith(absent)));
    }
  }
  EXPECT_EQ(argv[argv.size() - 2], "--no-requeue");
  // The default GRES is "gpu", with the default pre-termination signal.
  auto plan2 = plan_of(basic_request(), basic_cluster());
  ASSERT_TRUE(plan2.ok());
  auto argv2 = sbatch_argv_of(plan2->submit_command);
  EXPECT_THAT(argv2, ::testing::Contains("--gres=gpu:8"));
  EXPECT_THAT(argv2, ::testing::Contains("--signal=B:USR1@120"));
}

TEST(slurm_parse_batch_plan, PercentInTheStorageRootIsEscapedForOutputOnly) {
  auto plan = plan_of(basic_request(), basic_cluster("/data/100%/orch"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto argv = sbatch_argv_of(plan->submit_command);
  const std::string d = "/data/100%/orch/runs/orch-7-2-5f3a9c";
  EXPECT_THAT(argv, ::testing::Contains("--output=/data/100%%/orch/runs/orch-7-2-5f3a9c/"
                                        "output.log"));
  EXPECT_THAT(argv, ::testing::Contains("--chdir=" + d + "/work"));
  EXPECT_EQ(argv.back(), d + "/job.sh");
}

TEST(slurm_parse_batch_plan, ScriptLayout) {
  LaunchRequest r = basic_request();
  r.env = {{"ORCH_RESUME_FROM", "/ckpt/step-500.pt"}, {"NCCL_DEBUG", "INFO"}};
  auto plan = plan_of(r, basic_cluster());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const std::string& s = plan->script;
  EXPECT_THAT(s, StartsWith("#!/bin/sh\n"));
  EXPECT_THAT(s, HasSubstr("export NCCL_DEBUG='INFO'\n"));
  EXPECT_THAT(s, HasSubstr("export ORCH_RESUME_FROM='/ckpt/step-500.pt'\n"));
  EXPECT_THAT(s, HasSubstr("export ORCH_RUN_DIR='/shared/orch/runs/orch-7-2-5f3a9c/work'\n"));
  EXPECT_THAT(s, HasSubstr("export ORCH_GPUS='16'\n"));
  // Every task runs under the agent, in srun, a child that the pre-termination signal is
  // passed on to.
  EXPECT_THAT(
      s,
      HasSubstr("\nsrun --nodes=2 --ntasks-per-node=1 --kill-on-bad-exit=1 '" + kAgent +
                "' run --events '/shared/orch/runs/orch-7-2-5f3a9c/tasks/%t.events.jsonl'"
                " --heartbeat-s '" +
                seconds_text(r.heartbeat_s) + "' --hang-after-s '" + seconds_text(r.hang_after_s) +
                "' '--watch-s' '2' '--gpu-sample-s' '30' '--fault-action' 'record'"
                " --place-from slurm --master-addr \"$master\" --master-port " +
                std::to_string(master_port_for(r.token)) + " --" + shell_words("python train.py") +
                " &\nchild=$!\n"));
  // The trap is set before srun starts; a signal that comes before `child` is known is passed
  // on as soon as it is.
  const std::string trap =
      "\nchild=; pending=; trapped=; status=\ntrap 'trapped=1; if [ -n \"$child\" ]; then kill -s "
      "'\\''USR1'\\'' \"$child\" 2>/dev/null; else pending=1; fi' 'USR1'\n";
  EXPECT_THAT(s, HasSubstr(trap));
  EXPECT_LT(s.find(trap), s.find("\nsrun "));
  EXPECT_THAT(
      s, HasSubstr("\nchild=$!\n[ -z \"$pending\" ] || kill -s 'USR1' \"$child\" 2>/dev/null\n"));
  // A trapped signal interrupts wait: the script waits again for srun's own status.
  EXPECT_THAT(s, ::testing::EndsWith("\nwhile :; do\n  trapped=\n  wait \"$child\"; s=$?\n"
                                     "  [ \"$s\" -eq 127 ] && [ -n \"$status\" ] && break\n"
                                     "  status=$s\n  [ -n \"$trapped\" ] && [ \"$s\" -gt 128 ] || "
                                     "break\ndone\nexit \"$status\"\n"));
  // sbatch reads #SBATCH directives only before the first command; the first command is the
  // job_id write, and no line before it is a directive.
  std::istringstream lines(s);
  std::string line;
  while (std::getline(lines, line) && !line.empty() && line[0] == '#') {
    EXPECT_THAT(line, ::testing::Not(StartsWith("#SBATCH")));
  }
  EXPECT_THAT(line, StartsWith("printf '%s\\n' \"${SLURM_JOB_ID:-}\" >"));
}

// The heart of it: hostile values everywhere, and the script run for real.
TEST(slurm_parse_batch_plan, HostileValuesRunVerbatimAndNothingIsInjected) {
  TempDir tmp;
  const std::string pwned = tmp.path() + "/pwned";
  const std::string touch = "touch '" + pwned + "'";
  // A storage root with a space, a quote, '%' and "$(...)" in its name.
  const std::string root = tmp.path() + "/st 'o%re $(" + touch + ")";

  LaunchRequest r = basic_request();
  r.nodes = 1;  // one task, so that the output is one task's
  r.job_name = "evil \"name\" 'q' $(" + touch + ") `" + touch + "`\nline2 | x=y ; rm -rf /";
  const std::string env_value =
      "v'al \"x\" $(" + touch + ") `" + touch + "` ${HOME} \\n\n#SBATCH --wrap=bad\nend";
  r.env = {{"HOSTILE", env_value}, {"EMPTY", ""}};
  // The command is shell code on purpose (run by sh -c), but it must reach sh -c byte for byte:
  // it prints its own arguments and variables, and runs a subshell only where it says so.
  r.command =
      "printf '[%s]\\n' \"$HOSTILE\" \"$EMPTY\" \"$ORCH_TOKEN\" \"$ORCH_JOB_ID\" "
      "\"$ORCH_ATTEMPT\" \"$ORCH_GPUS\" \"$ORCH_SITE\" \"$ORCH_RUN_DIR\" \"$(pwd)\"; "
      "echo 'single $(not run) `nor this`' \"double \\\"quoted\\\"\"; echo pid=$$";
  ClusterSpec c = basic_cluster(root);

  auto plan = plan_of(r, c);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const RunPaths& p = plan->paths;
  EXPECT_EQ(p.dir, root + "/runs/orch-7-2-5f3a9c");

  for (const std::string& sh : shells()) {
    SCOPED_TRACE(sh);
    fs::remove_all(root);
    // prepare_command creates the run directory and work/.
    Outcome prep = run({sh, "-c", plan->prepare_command});
    ASSERT_EQ(prep.status, 0);
    ASSERT_TRUE(fs::is_directory(p.work));
    { std::ofstream(p.script, std::ios::binary) << plan->script; }
    // slurmd runs the script with the job's environment; here with SLURM_JOB_ID only.
    Outcome job = run({sh, p.script}, slurmd_env("4242"));
    ASSERT_TRUE(WIFEXITED(job.status)) << job.out;
    EXPECT_EQ(WEXITSTATUS(job.status), 0) << job.out;
    const std::string want = "[" + env_value + "]\n[]\n[orch-7-2-5f3a9c]\n[7]\n[2]\n[8]\n" +
                             "[alpha]\n[" + p.work + "]\n[" + p.work + "]\n" +
                             "single $(not run) `nor this` double \"quoted\"\n";
    EXPECT_EQ(job.out.substr(0, job.out.rfind("pid=")), want);
    EXPECT_EQ(read_file(p.job_id), "4242\n");
    EXPECT_FALSE(fs::exists(p.job_id + ".tmp"));
    EXPECT_FALSE(fs::exists(pwned)) << "a value was executed";
  }

  // The submit command: the sbatch argv is exactly the intended one, the job's name in the
  // comment with its newline as '?' and '=' as ':'.
  for (const std::string& sh : shells()) {
    SCOPED_TRACE(sh);
    auto argv = sbatch_argv_of(plan->submit_command, sh);
    const std::string d = p.dir;
    std::string out;  // the output path with '%' written "%%" for sbatch
    for (char ch : p.output) out += ch == '%' ? std::string("%%") : std::string(1, ch);
    std::string comment = "--comment=orchestrate token=orch-7-2-5f3a9c name=evil \"name\" 'q' $(";
    comment += touch;
    comment += ") `";
    comment += touch;
    comment += "`?line2 | x:y ; rm -rf /";
    EXPECT_THAT(argv, ElementsAreArray(std::vector<std::string>{
                          "sbatch", "--parsable", "--job-name=orch-7-2-5f3a9c", comment,
                          "--output=" + out, "--error=" + out, "--open-mode=append",
                          "--chdir=" + d + "/work", "--nodes=1", "--ntasks-per-node=1",
                          "--gres=gpu:8", "--signal=B:USR1@120", "--no-requeue", d + "/job.sh"}));
    EXPECT_FALSE(fs::exists(pwned)) << "a value was executed";
  }
}

// secret_env's values go in a file of their own that the script reads and removes first: never in
// job.sh (which sbatch copies to Slurm's spool) nor in the sbatch command line (an event).
TEST(slurm_parse_batch_plan, SecretsReachTheCommandFromAFileTheScriptRemoves) {
  TempDir tmp;
  LaunchRequest r = basic_request();
  r.nodes = 1;
  const std::string secret = "hunter2 'quoted' $(touch " + tmp.path() + "/pwned)";
  r.secret_refs = {{"API_KEY", "api-key"}};
  r.secret_env = {{"API_KEY", secret}};
  r.command = "printf '[%s]\\n' \"$API_KEY\"";
  auto plan = plan_of(r, basic_cluster(tmp.path() + "/root"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const RunPaths& p = plan->paths;
  EXPECT_EQ(p.secrets, p.dir + "/secrets.env");
  EXPECT_EQ(plan->script.find("hunter2"), std::string::npos) << plan->script;
  EXPECT_EQ(plan->submit_command.find("hunter2"), std::string::npos);
  EXPECT_EQ(plan->prepare_command.find("hunter2"), std::string::npos);
  EXPECT_NE(plan->secrets.find("hunter2"), std::string::npos);
  for (const std::string& sh : shells()) {
    SCOPED_TRACE(sh);
    fs::remove_all(tmp.path() + "/root");
    ASSERT_EQ(run({sh, "-c", plan->prepare_command}).status, 0);
    { std::ofstream(p.script, std::ios::binary) << plan->script; }
    { std::ofstream(p.secrets, std::ios::binary) << plan->secrets; }
    Outcome job = run({sh, p.script}, slurmd_env("4243"));
    EXPECT_EQ(WEXITSTATUS(job.status), 0) << job.out;
    EXPECT_EQ(job.out, "[" + secret + "]\n");
    EXPECT_FALSE(fs::exists(p.secrets)) << "the secrets stay on the cluster's disk";
    EXPECT_FALSE(fs::exists(tmp.path() + "/pwned"));
    // Without its secrets file the script stops before the command runs.
    Outcome again = run({sh, p.script}, slurmd_env("4244"));
    EXPECT_NE(WEXITSTATUS(again.status), 0);
    EXPECT_EQ(again.out, "") << "the command ran without its secrets";
  }
}

// Slurm sends the pre-termination signal (--signal=B:USR1@N) to the batch shell alone; the
// script passes it on to the job's command, which can then save a checkpoint, and exits with
// the command's status.
TEST(slurm_parse_batch_plan, PreTerminationSignalReachesTheCommand) {
  TempDir tmp;
  LaunchRequest r = basic_request();
  r.nodes = 1;  // one task: a second one could get the signal before its trap is set
  r.command =
      "trap 'echo got-usr1 > signalled.txt; exit 7' USR1; echo up > ready.txt; "
      "while :; do sleep 0.05; done";
  auto plan = plan_of(r, basic_cluster(tmp.path()));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const RunPaths& p = plan->paths;
  for (const std::string& sh : shells()) {
    SCOPED_TRACE(sh);
    fs::remove_all(p.dir);
    ASSERT_EQ(run({sh, "-c", plan->prepare_command}).status, 0);
    { std::ofstream(p.script, std::ios::binary) << plan->script; }
    pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);  // its own group, so that the test can end every process it started
      for (const auto& [k, v] : slurmd_env("5")) setenv(k.c_str(), v.c_str(), 1);
      execl(sh.c_str(), sh.c_str(), p.script.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid, pid);
    // Whatever happens, nothing outlives the test (a stray task would hold ctest's pipe).
    struct GroupKiller {
      pid_t pgid;
      std::string dir;
      ~GroupKiller() {
        kill(-pgid, SIGKILL);
        kill_processes_mentioning(dir);  // each task's agent leads a group of its own
      }
    } killer{pid, p.dir};
    // Bounded wait (30 s, for a loaded CI) for the command to be up (it writes ready.txt), then
    // the signal.
    for (int i = 0; i < 3000 && !fs::exists(p.work + "/ready.txt"); ++i) usleep(10'000);
    ASSERT_TRUE(fs::exists(p.work + "/ready.txt"));
    kill(pid, SIGUSR1);
    // Bounded wait for the script to end.
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 3000 && done == 0; ++i) {
      done = waitpid(pid, &status, WNOHANG);
      if (done == 0) usleep(10'000);
    }
    ASSERT_EQ(done, pid) << "the script did not end within 30 s of the signal";
    ASSERT_TRUE(WIFEXITED(status)) << "the script died of the signal itself";
    EXPECT_EQ(WEXITSTATUS(status), 7);
    EXPECT_EQ(read_file(p.work + "/signalled.txt"), "got-usr1\n");
  }
}

TEST(slurm_parse_batch_plan, AppendsToOutputAndRewritesJobIdOnASecondRun) {
  TempDir tmp;
  LaunchRequest r = basic_request();
  r.nodes = 1;
  r.command = "echo run $SLURM_JOB_ID";
  auto plan = plan_of(r, basic_cluster(tmp.path()));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(run({"/bin/sh", "-c", plan->prepare_command}).status, 0);
  std::ofstream(plan->paths.script) << plan->script;
  EXPECT_EQ(run({"/bin/sh", plan->paths.script}, slurmd_env("1")).out, "run 1\n");
  EXPECT_EQ(run({"/bin/sh", plan->paths.script}, slurmd_env("2")).out, "run 2\n");
  EXPECT_EQ(read_file(plan->paths.job_id), "2\n");
}

TEST(slurm_parse_batch_plan, TheJobsCheckpointDirectoryIsMadeBeforeItRunsAndNeverALink) {
  TempDir tmp;
  LaunchRequest r = basic_request();
  r.nodes = 1;
  const std::string dir = tmp.path() + "/ckpt/job-7 'x'";
  r.checkpoint_dir = dir;
  r.env["ORCH_CHECKPOINT_DIR"] = dir;  // as the brain sets it
  r.command = "printf '%s\\n' \"$ORCH_CHECKPOINT_DIR\"";
  auto plan = plan_of(r, basic_cluster(tmp.path() + "/root"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(run({"/bin/sh", "-c", plan->prepare_command}).status, 0);
  std::ofstream(plan->paths.script) << plan->script;
  Outcome job = run({"/bin/sh", plan->paths.script}, slurmd_env("5"));
  EXPECT_EQ(WEXITSTATUS(job.status), 0) << job.out;
  EXPECT_EQ(job.out, dir + "\n");
  struct stat st {};
  ASSERT_EQ(lstat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  // A link where the directory should be (to another job's): the job never starts.
  fs::remove_all(dir);
  fs::create_directories(tmp.path() + "/theirs");
  fs::create_directory_symlink(tmp.path() + "/theirs", dir);
  Outcome linked = run({"/bin/sh", plan->paths.script}, slurmd_env("6"));
  EXPECT_NE(WEXITSTATUS(linked.status), 0);
  EXPECT_EQ(linked.out, "") << "the command ran in a linked checkpoint directory";
}

TEST(slurm_parse_batch_plan, MissingWorkDirectoryFailsLoudly) {
  TempDir tmp;
  auto plan = plan_of(basic_request(), basic_cluster(tmp.path()));
  ASSERT_TRUE(plan.ok());
  fs::create_directories(plan->paths.dir);  // but not work/
  std::ofstream(plan->paths.script) << plan->script;
  Outcome job = run({"/bin/sh", plan->paths.script}, slurmd_env("3"));
  EXPECT_TRUE(WIFEXITED(job.status));
  EXPECT_EQ(WEXITSTATUS(job.status), 1);
  EXPECT_EQ(job.out, "");  // the command did not run
}

TEST(slurm_parse_batch_plan, EveryTaskRunsUnderTheAgentWithItsPlace) {
  TempDir tmp;
  LaunchRequest r = basic_request();
  r.tasks_per_node = 2;
  r.command =
      "echo \"rank=$RANK node=$NODE_RANK local=$LOCAL_RANK world=$WORLD_SIZE "
      "port=$MASTER_PORT master_set=${MASTER_ADDR:+yes}\"";
  auto plan = plan_of(r, basic_cluster(tmp.path()));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const RunPaths& p = plan->paths;
  ASSERT_EQ(run({"/bin/sh", "-c", plan->prepare_command}).status, 0);
  EXPECT_EQ(read_file(p.gang), gang_file_line(r) + "\n");
  std::ofstream(p.script) << plan->script;
  Outcome job = run({"/bin/sh", p.script}, slurmd_env("9"));
  ASSERT_TRUE(WIFEXITED(job.status));
  EXPECT_EQ(WEXITSTATUS(job.status), 0) << job.out;
  const std::string port = std::to_string(master_port_for(r.token));
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_THAT(job.out, HasSubstr("rank=" + std::to_string(rank) + " node=" +
                                   std::to_string(rank / 2) + " local=" + std::to_string(rank % 2) +
                                   " world=4 port=" + port + " master_set=yes\n"));
    const std::string events = read_file(p.tasks + "/" + std::to_string(rank) + ".events.jsonl");
    EXPECT_THAT(events, HasSubstr("\"event\":\"start\""));
    EXPECT_THAT(events, HasSubstr("\"task_rank\":" + std::to_string(rank)));
    EXPECT_THAT(events, HasSubstr("\"exit_code\":0"));
  }
}

// One task that fails fails the step, and the script exits with its status.
TEST(slurm_parse_batch_plan, OneFailedTaskFailsTheScript) {
  TempDir tmp;
  LaunchRequest r = basic_request();
  r.command = "[ \"$RANK\" = 1 ] && exit 3; exit 0";
  auto plan = plan_of(r, basic_cluster(tmp.path()));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(run({"/bin/sh", "-c", plan->prepare_command}).status, 0);
  std::ofstream(plan->paths.script) << plan->script;
  Outcome job = run({"/bin/sh", plan->paths.script}, slurmd_env("10"));
  ASSERT_TRUE(WIFEXITED(job.status));
  EXPECT_EQ(WEXITSTATUS(job.status), 3);
  EXPECT_THAT(read_file(plan->paths.tasks + "/1.events.jsonl"), HasSubstr("\"exit_code\":3"));
}

}  // namespace
}  // namespace orch::slurm
