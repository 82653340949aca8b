// One round of burn-in's fabric step on Slurm (fabric_command.h): the command runs every pair at
// once under /bin/sh (a stand-in srun on PATH plays the cluster), and its output reads back one
// result per pair.
#include "adapters/slurm/fabric_command.h"

#include <gmock/gmock.h>
#include <sys/stat.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace orch::slurm {
namespace {

using ::testing::HasSubstr;

FabricRoundRequest round_of(std::vector<NodePair> pairs) {
  FabricRoundRequest r;
  r.token = "orch-fabric-alpha-1";
  r.pairs = std::move(pairs);
  r.all_reduce_perf = "/opt/nccl-tests/all_reduce_perf";
  r.bytes = 1 << 20;
  r.timeout_s = 20;
  return r;
}

// A stand-in srun: the pair with n3 is refused, the pair with n4 prints a table at 12.1 GB/s,
// every other prints one at 40.3 GB/s; each prints its own arguments on stderr.
std::string fake_srun_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("fabric-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "srun") << R"(#!/bin/sh
echo "srun $*" >&2
case "$*" in
  *n3*) echo "srun: error: Unable to allocate resources: Invalid node name specified" >&2; exit 1;;
  *n4*) bw=12.1;;
  *) bw=40.3;;
esac
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "     1048576        262144     float     sum      -1    100.0   10.00   $bw      0    100.0   10.00   $bw      0"
echo "# Avg bus bandwidth    : $bw"
)";
  chmod((dir / "srun").c_str(), 0755);
  return dir.string();
}

std::string run_sh(const std::string& path_dir, const std::string& command) {
  const std::string full = "PATH='" + path_dir + "':$PATH; " + command;
  std::string quoted = "'";
  for (char c : full) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE* p = popen(("/bin/sh -c " + quoted).c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (p && fgets(buf.data(), buf.size(), p)) out += buf.data();
  if (p) pclose(p);
  return out;
}

TEST(FabricRoundCommand, EveryPairRunsAtOnceAndReadsBackInOrder) {
  auto request = round_of({{"n1", "n2"}, {"n3", "n5"}, {"n4", "n6"}});
  auto command = fabric_round_command(request, SlurmSpec{});
  ASSERT_TRUE(command.ok()) << command.error().message;
  const std::string dir = fake_srun_dir();
  const std::string out = run_sh(dir, *command);
  std::filesystem::remove_all(dir);
  auto results = parse_fabric_round(out, request);
  ASSERT_EQ(results.size(), 3u) << out;
  EXPECT_EQ(results[0].a, "n1");
  EXPECT_EQ(results[0].b, "n2");
  ASSERT_TRUE(results[0].busbw_gb_s) << results[0].error << "\n" << out;
  EXPECT_DOUBLE_EQ(*results[0].busbw_gb_s, 40.3);
  EXPECT_FALSE(results[1].busbw_gb_s);
  EXPECT_THAT(results[1].error, HasSubstr("exit 1: srun: error: Unable to allocate resources"));
  ASSERT_TRUE(results[2].busbw_gb_s) << results[2].error;
  EXPECT_DOUBLE_EQ(*results[2].busbw_gb_s, 12.1);
}

TEST(FabricRoundCommand, EachPairIsOneTwoNodeSrunBoundedByTimeout) {
  auto request = round_of({{"n1", "n2"}});
  request.gpus_per_node = 8;
  SlurmSpec slurm;
  slurm.partition = "gpu";
  auto command = fabric_round_command(request, slurm);
  ASSERT_TRUE(command.ok()) << command.error().message;
  EXPECT_THAT(*command, HasSubstr("{ 'timeout' '--kill-after=1' '18' 'srun'"));
  EXPECT_THAT(*command, HasSubstr("'--job-name=orch-fabric-alpha-1-p1' '--nodes=2' "
                                  "'--ntasks-per-node=1' '--nodelist=n1,n2' '--kill-on-bad-exit=1' "
                                  "'--gres=gpu:8' '--partition=gpu'"));
  EXPECT_THAT(*command, HasSubstr("'/opt/nccl-tests/all_reduce_perf' '-b' '1048576' '-e' "
                                  "'1048576' '-g' '8'"));
  EXPECT_THAT(*command, HasSubstr(" & wait;"));
}

TEST(FabricRoundCommand, ValuesThatCouldBreakTheShellAreQuoted) {
  auto request = round_of({{"n1", "n2"}});
  request.all_reduce_perf = "/opt/my tools/$(reboot)/all_reduce_perf";
  auto command = fabric_round_command(request, SlurmSpec{});
  ASSERT_TRUE(command.ok()) << command.error().message;
  EXPECT_THAT(*command, HasSubstr("'/opt/my tools/$(reboot)/all_reduce_perf'"));
}

TEST(FabricRoundCommand, BadRequestsAreRefusedWithWhy) {
  auto relative = round_of({{"n1", "n2"}});
  relative.all_reduce_perf = "all_reduce_perf";
  EXPECT_THAT(fabric_round_command(relative, SlurmSpec{}).error().message,
              HasSubstr("is not an absolute path on the nodes"));
  EXPECT_THAT(fabric_round_command(round_of({}), SlurmSpec{}).error().message,
              HasSubstr("at least one pair"));
  EXPECT_THAT(fabric_round_command(round_of({{"n1", "n1"}}), SlurmSpec{}).error().message,
              HasSubstr("names one node twice"));
  EXPECT_THAT(fabric_round_command(round_of({{"n1", "a,b"}}), SlurmSpec{}).error().message,
              HasSubstr("without commas"));
}

TEST(FabricRoundCommand, APairTimedOutOrMissingFromTheOutputSaysSo) {
  auto request = round_of({{"n1", "n2"}, {"n3", "n4"}});
  auto results = parse_fabric_round(
      "@@orch-fabric 1 rc 124\n@@orch-fabric 1 out\n@@orch-fabric 1 err\n", request);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error, "did not finish within 20 s");
  EXPECT_EQ(results[1].error, "no output");
}

TEST(FabricRoundCommand, WrongValuesMakeAPairFail) {
  auto request = round_of({{"n1", "n2"}});
  auto results = parse_fabric_round(
      "@@orch-fabric 1 rc 0\n@@orch-fabric 1 out\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    100.0   10.00   40.0      7    "
      "100.0   10.00   40.0      0\n"
      "@@orch-fabric 1 err\n",
      request);
  EXPECT_FALSE(results[0].busbw_gb_s);
  EXPECT_EQ(results[0].error, "7 wrong value(s) in the results");
}

}  // namespace
}  // namespace orch::slurm
