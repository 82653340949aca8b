// The node probe's commands (adapters/slurm/probe_command.h): the srun argv, read back through a
// real shell to prove the quoting; the prepare command run by /bin/sh in a temporary directory;
// the reading of srun's output. Also the agent's content id (agent_binary.h). No Slurm needed.
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "adapters/slurm/agent_binary.h"
#include "adapters/slurm/probe_command.h"
#include "adapters/ssh/shell_quote.h"
#include "tests/unit/slurm/process_test_util.h"

namespace orch::slurm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// /bin/sh -c script; its stdout and exit code (-1 when a signal ended it).
Outcome sh(const std::string& script) {
  Outcome r = run({"/bin/sh", "-c", script});
  r.status = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
  return r;
}

ProbeJob basic_job() {
  ProbeJob job;
  job.token = "burnin-alpha-1";
  job.nodes = {"alpha-n1", "alpha-n2"};
  job.agent = "/shared/orch/bin/orchestrate-agent-0123456789abcdef";
  job.dir = "/shared/ckpt";
  job.io_bytes = 1 << 20;
  job.compute_s = 0.5;
  job.round_s = 60;
  return job;
}

// A probe line in the agent's format (agents/README.md, "Probe output").
std::string probe_line(const std::string& node, double gflops) {
  return "{\"probe\":1,\"node\":\"" + node +
         "\",\"hostname\":\"h\",\"at_ms\":1700000000000,\"ok\":true,\"checks\":[{\"name\":"
         "\"compute\",\"ok\":true,\"detail\":\"x\"}],\"compute\":{\"kind\":\"cpu-gemm\","
         "\"gflops\":" +
         std::to_string(gflops) +
         ",\"n\":192,\"rounds\":5},\"io\":{\"dir\":\"/d\",\"write_mb_s\":100.0,\"read_mb_s\":"
         "200.0,\"free_bytes\":1000,\"bytes\":1048576},\"gpus\":[],\"xid\":[]}";
}

TEST(slurm_probe_command, SrunArgvForABasicRound) {
  auto argv = probe_srun_argv(basic_job(), SlurmSpec{.gres = "gpu"});
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  const std::vector<std::string> expected = {"timeout",
                                             "--kill-after=3",
                                             "54",
                                             "srun",
                                             "--job-name=burnin-alpha-1",
                                             "--nodes=2",
                                             "--ntasks-per-node=1",
                                             "--nodelist=alpha-n1,alpha-n2",
                                             "--kill-on-bad-exit=0",
                                             "--chdir=/shared/ckpt",
                                             "--time=1",
                                             "/shared/orch/bin/orchestrate-agent-0123456789abcdef",
                                             "probe",
                                             "--dir",
                                             "/shared/ckpt",
                                             "--io-bytes",
                                             "1048576",
                                             "--compute-s",
                                             "0.5"};
  EXPECT_EQ(*argv, expected);
}

TEST(slurm_probe_command, SrunArgvCarriesTheClustersOptionsAndGpus) {
  ProbeJob job = basic_job();
  job.gpus_per_node = 8;
  job.round_s = 300;
  SlurmSpec s;
  s.partition = "gpu";
  s.account = "ml team";
  s.qos = "high";
  s.gres = "gpu:h100";
  s.time_limit = "10:00";  // the jobs' limit, not the probe's: not used
  auto argv = probe_srun_argv(job, s);
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  const std::vector<std::string> expected = {"srun",
                                             "--job-name=burnin-alpha-1",
                                             "--nodes=2",
                                             "--ntasks-per-node=1",
                                             "--nodelist=alpha-n1,alpha-n2",
                                             "--kill-on-bad-exit=0",
                                             "--chdir=/shared/ckpt",
                                             "--gres=gpu:h100:8",
                                             "--partition=gpu",
                                             "--account=ml team",
                                             "--qos=high",
                                             "--time=5"};
  EXPECT_EQ(std::vector<std::string>(argv->begin() + 3, argv->begin() + 15), expected);
  EXPECT_EQ((*argv)[1], "--kill-after=7.5");
  EXPECT_EQ((*argv)[2], "285");
}

TEST(slurm_probe_command, SrunArgvCarriesTheGpuPartsOfTheRoundAfterTheCommonFlags) {
  ProbeJob job = basic_job();
  job.gpu.nvidia_smi = "/usr/bin/nvidia-smi";
  job.gpu.expect_gpus = 8;
  job.gpu.dcgm_level = 2;
  job.gpu.torch_python = "/opt/venv/bin/python3";
  job.gpu.torch_s = 20;
  auto argv = probe_srun_argv(job, SlurmSpec{});
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  const std::vector<std::string> tail = {
      "--compute-s",   "0.5", "--nvidia-smi",   "/usr/bin/nvidia-smi",
      "--expect-gpus", "8",   "--dcgm",         "dcgmi",
      "--dcgm-level",  "2",   "--torch-python", "/opt/venv/bin/python3",
      "--torch-s",     "20"};
  EXPECT_EQ(std::vector<std::string>(argv->end() - tail.size(), argv->end()), tail);
  // Without GPU options the command ends with the common flags, as before issue 43.
  auto plain = probe_srun_argv(basic_job(), SlurmSpec{});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->back(), "0.5");
}

TEST(slurm_probe_command, SrunArgvSurvivesTheRemoteShell) {
  ProbeJob job = basic_job();
  job.dir = "/shared/it's $(rm -rf /) `x` ;|&\n dir";
  job.agent = "/shared/a b/agent*";
  auto argv = probe_srun_argv(job, SlurmSpec{.account = "$HOME"});
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  auto command = shell_command(*argv);
  ASSERT_TRUE(command.ok());
  // `timeout` replaced by a function that prints the argv it was given, one word per NUL.
  Outcome r = sh("timeout() { printf '%s\\0' timeout \"$@\"; }\n" + *command + "\n");
  ASSERT_EQ(r.status, 0) << *command;
  std::vector<std::string> got;
  std::size_t start = 0;
  for (std::size_t i = 0; i < r.out.size(); ++i) {
    if (r.out[i] == '\0') {
      got.push_back(r.out.substr(start, i - start));
      start = i + 1;
    }
  }
  EXPECT_EQ(got, *argv);
}

TEST(slurm_probe_command, SrunArgvRefusesWhatCannotBeSentSafely) {
  struct Case {
    std::string what;
    void (*change)(ProbeJob&);
    std::string message;
  };
  const Case cases[] = {
      {"bad token", [](ProbeJob& j) { j.token = "a b"; }, "launch token"},
      {"empty token", [](ProbeJob& j) { j.token = ""; }, "launch token"},
      {"no nodes", [](ProbeJob& j) { j.nodes.clear(); }, "at least one node"},
      {"node list in a name", [](ProbeJob& j) { j.nodes = {"n[1-2]"}; }, "srun --nodelist"},
      {"comma in a name", [](ProbeJob& j) { j.nodes = {"a,b"}; }, "srun --nodelist"},
      {"relative agent", [](ProbeJob& j) { j.agent = "bin/agent"; }, "not absolute"},
      {"relative dir", [](ProbeJob& j) { j.dir = "probe"; }, "not an absolute path"},
      {"negative io", [](ProbeJob& j) { j.io_bytes = -1; }, "must not be negative"},
      {"negative compute", [](ProbeJob& j) { j.compute_s = -1; }, "must not be negative"},
      {"no time", [](ProbeJob& j) { j.round_s = 0; }, "positive"},
      {"NUL in dir", [](ProbeJob& j) { j.dir = std::string("/a\0b", 4); }, "probe command"},
  };
  for (const Case& c : cases) {
    ProbeJob job = basic_job();
    c.change(job);
    auto argv = probe_srun_argv(job, SlurmSpec{});
    ASSERT_FALSE(argv.ok()) << c.what;
    EXPECT_EQ(argv.error().kind, ErrorKind::invalid) << c.what;
    EXPECT_THAT(argv.error().message, HasSubstr(c.message)) << c.what;
  }
}

TEST(slurm_probe_command, TimesLeaveRoomForThePartialAnswer) {
  ProbeTimes t = probe_times(60);
  EXPECT_DOUBLE_EQ(t.remote_s, 54);
  EXPECT_DOUBLE_EQ(t.kill_after_s, 3);
  EXPECT_EQ(t.time_limit_min, 1);
  t = probe_times(600);  // margin capped at 15 s
  EXPECT_DOUBLE_EQ(t.remote_s, 585);
  EXPECT_DOUBLE_EQ(t.kill_after_s, 7.5);
  EXPECT_EQ(t.time_limit_min, 10);
  t = probe_times(10);  // margin at least 2 s
  EXPECT_DOUBLE_EQ(t.remote_s, 8);
  EXPECT_DOUBLE_EQ(t.kill_after_s, 1);
  t = probe_times(2);  // too short for the margin: half of it
  EXPECT_DOUBLE_EQ(t.remote_s, 1);
  EXPECT_DOUBLE_EQ(t.kill_after_s, 0.5);
  EXPECT_EQ(t.time_limit_min, 1);
}

TEST(slurm_probe_command, Paths) {
  EXPECT_EQ(remote_agent_path("/shared/orch/", "0123"), "/shared/orch/bin/orchestrate-agent-0123");
  ClusterSpec c;
  c.storage_root = "/shared/orch";
  EXPECT_EQ(default_probe_dir(c), "/shared/orch/probe");
  c.checkpoint_root = "/ckpt";
  EXPECT_EQ(default_probe_dir(c), "/ckpt");
}

TEST(slurm_probe_command, PrepareMakesTheDirectoriesAndReportsAnExecutableAgent) {
  TempDir tmp;
  const std::string agent = tmp.path() + "/it's/bin/orchestrate-agent-abc";
  const std::string dir = tmp.path() + "/probe dir";
  auto command = probe_prepare_command(agent, dir);
  ASSERT_TRUE(command.ok()) << command.error().message;

  Outcome first = sh(*command);  // nothing there yet: directories made, no size
  EXPECT_EQ(first.status, 0);
  EXPECT_TRUE(fs::is_directory(tmp.path() + "/it's/bin"));
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(parse_agent_size(first.out), std::nullopt);

  std::ofstream(agent) << "12345";
  Outcome not_executable = sh(*command);
  EXPECT_EQ(not_executable.status, 0);
  EXPECT_EQ(parse_agent_size(not_executable.out), std::nullopt);

  chmod(agent.c_str(), 0755);
  Outcome ready = sh(*command);
  EXPECT_EQ(ready.status, 0);
  EXPECT_EQ(parse_agent_size(ready.out), 5);
}

TEST(slurm_probe_command, PrepareFailsWhenTheDirectoryCannotBeMade) {
  TempDir tmp;
  std::ofstream(tmp.path() + "/file") << "x";
  auto command = probe_prepare_command(tmp.path() + "/file/bin/agent", tmp.path() + "/p");
  ASSERT_TRUE(command.ok());
  EXPECT_NE(sh("( " + *command + " ) 2>/dev/null").status, 0);
}

TEST(slurm_probe_command, AgentSize) {
  EXPECT_EQ(parse_agent_size("324504\n"), 324504);
  EXPECT_EQ(parse_agent_size(""), std::nullopt);
  EXPECT_EQ(parse_agent_size("\n"), std::nullopt);
  EXPECT_EQ(parse_agent_size("12 KB"), std::nullopt);
  EXPECT_EQ(parse_agent_size("-1"), std::nullopt);
}

TEST(slurm_probe_command, ProbeLinesOnePerProbedNode) {
  std::string out = "srun: note on stdout\n" + probe_line("alpha-n2", 3.5) + "\n" +
                    probe_line("alpha-n1", 7.25) + "\n";
  ProbeLines lines = parse_probe_lines(out, {"alpha-n1", "alpha-n2", "alpha-n3"});
  ASSERT_THAT(lines.results, SizeIs(2));
  EXPECT_EQ(lines.results[0].node, "alpha-n2");
  EXPECT_EQ(lines.results[1].node, "alpha-n1");
  ASSERT_TRUE(lines.results[1].gemm_gflops.has_value());
  EXPECT_DOUBLE_EQ(*lines.results[1].gemm_gflops, 7.25);
  EXPECT_TRUE(lines.rejected.empty());
}

TEST(slurm_probe_command, ProbeLinesLeaveOutGarbledStrangersAndRepeats) {
  std::string good = probe_line("alpha-n1", 2);
  std::string out = good.substr(0, 40) + "\n" +                      // a task killed mid-write
                    probe_line("beta-n1", 1) + "\n" +                // not probed
                    good + "\n" + probe_line("alpha-n1", 9) + "\n";  // a repeat
  ProbeLines lines = parse_probe_lines(out, {"alpha-n1", "alpha-n2"});
  ASSERT_THAT(lines.results, SizeIs(1));
  EXPECT_DOUBLE_EQ(lines.results[0].gemm_gflops.value_or(0), 2);
  ASSERT_THAT(lines.rejected, SizeIs(3));
  EXPECT_THAT(lines.rejected[1], HasSubstr("beta-n1"));
  EXPECT_THAT(lines.rejected[2], HasSubstr("second result"));
}

TEST(slurm_agent_binary, ShortSha256) {
  EXPECT_EQ(short_sha256("abc"), "ba7816bf8f01cfea");
  EXPECT_EQ(short_sha256(""), "e3b0c44298fc1c14");
}

TEST(slurm_agent_binary, ReadsAndNoticesAChange) {
  TempDir tmp;
  const std::string path = tmp.path() + "/orchestrate-agent";
  std::ofstream(path) << "abc";
  auto agent = read_agent_binary(path);
  ASSERT_TRUE(agent.ok()) << agent.error().message;
  EXPECT_EQ(agent->content, "abc");
  EXPECT_EQ(agent->id, "ba7816bf8f01cfea");
  EXPECT_TRUE(agent_unchanged(*agent));
  std::ofstream(path) << "abcd";
  EXPECT_FALSE(agent_unchanged(*agent));

  auto missing = read_agent_binary(tmp.path() + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::misconfigured);
  EXPECT_THAT(missing.error().message, HasSubstr("build orchestrate-agent"));
}

TEST(slurm_agent_binary, DefaultPathIsBesideThisProgram) {
  std::string path = default_agent_path();
  EXPECT_EQ(fs::path(path).filename(), "orchestrate-agent");
  EXPECT_EQ(fs::path(path).parent_path(), fs::read_symlink("/proc/self/exe").parent_path());
}

// A stand-in srun that does what srun --output does: each task's stdout in the file the pattern
// names (%t: the task's rank), here an 8 KiB probe line per node, then srun's exit status 3.
TEST(slurm_probe_command, TheRoundKeepsEachTasksLongLineWholeInAFileAndReadsThemBack) {
  const fs::path tmp = fs::temp_directory_path() / ("probe-round-" + std::to_string(getpid()));
  fs::create_directories(tmp / "bin");
  fs::create_directories(tmp / "ckpt %dir");
  std::ofstream(tmp / "bin" / "srun") << R"sh(#!/bin/sh
for a in "$@"; do case "$a" in --output=*) pattern="${a#--output=}";; esac; done
pattern=$(printf '%s' "$pattern" | sed 's/%%/%/g')
i=0
for node in alpha-n1 alpha-n2; do
  f=$(printf '%s' "$pattern" | sed "s/%t/$i/")
  printf '%s\n' "$(cat "$(dirname "$0")/line-$node")" > "$f"
  i=$((i + 1))
done
exit 3
)sh";
  chmod((tmp / "bin" / "srun").c_str(), 0755);
  const std::string pad(8000, 'x');
  for (const std::string node : {"alpha-n1", "alpha-n2"}) {
    std::string line = probe_line(node, 7.0);
    line.insert(line.size() - 1, ",\"pad\":\"" + pad + "\"");
    std::ofstream(tmp / "bin" / ("line-" + node)) << line;
  }
  ProbeJob job = basic_job();
  job.dir = (tmp / "ckpt %dir").string();
  auto command = probe_round_command(job, SlurmSpec{});
  ASSERT_TRUE(command.ok()) << command.error().message;
  EXPECT_THAT(*command, HasSubstr("--output="));
  Outcome r = sh("PATH=" + *shell_quote((tmp / "bin").string()) + ":$PATH; " + *command);
  EXPECT_EQ(r.status, 3) << "srun's exit status is the round's";
  ProbeLines lines = parse_probe_lines(r.out, job.nodes);
  EXPECT_THAT(lines.results, SizeIs(2)) << r.out.substr(0, 300);
  EXPECT_THAT(lines.rejected, SizeIs(0));
  int left = 0;
  for (const auto& e : fs::directory_iterator(tmp / "ckpt %dir")) left += e.path().empty() ? 0 : 1;
  EXPECT_EQ(left, 0) << "the task files are removed";
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace orch::slurm
