// The poll round's one command (observe_command.h), run for real by /bin/sh over run
// directories made here, with squeue and scancel stand-ins first on PATH (stand_in_bin/), and
// its output read back; and the node_lost command that records a loss and cancels the job.
#include "adapters/slurm/observe_command.h"

#include <gmock/gmock.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/slurm/process_test_util.h"

namespace orch::slurm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<std::pair<std::string, std::string>> stand_in_path(
    std::vector<std::pair<std::string, std::string>> more = {}) {
  const char* path = std::getenv("PATH");
  more.emplace_back("PATH", std::string(ORCH_SOURCE_DIR "/tests/unit/slurm/stand_in_bin:") +
                                (path ? path : "/usr/bin:/bin"));
  return more;
}

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::int64_t wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class ObserveCommandTest : public ::testing::Test {
 protected:
  // A storage root with a space and a quote in it: every path goes through shell_quote.
  void SetUp() override { root_ = tmp_.path() + "/st 'o re"; }
  std::string run_dir(const std::string& token) { return run_paths(root_, token).dir; }

  Outcome observe(const std::vector<std::string>& tokens,
                  std::vector<std::pair<std::string, std::string>> env = {}) {
    auto command = observe_command(tokens, root_);
    EXPECT_TRUE(command.ok()) << command.error().message;
    return run({"/bin/sh", "-c", *command}, stand_in_path(std::move(env)));
  }

  TempDir tmp_;
  std::string root_;
};

TEST_F(ObserveCommandTest, ReadsEachTokensGangMarkerAndNewestRecords) {
  const std::string a = run_dir("orch-1-1-a");
  write(a + "/gang", "tasks=3 tasks_per_node=1 heartbeat_s=5 heartbeat_timeout_s=30\n");
  write(a + "/tasks/0.events.jsonl",
        "{\"event\":\"start\",\"at_ms\":100,\"node\":\"n1\"}\n"
        "{\"event\":\"heartbeat\",\"at_ms\":200,\"node\":\"n1\"}\n");
  // A last line written without its newline yet still reads.
  write(a + "/tasks/1.events.jsonl",
        "{\"event\":\"start\",\"at_ms\":100}\n{\"event\":\"progress\",\"at_ms\":250}");
  write(a + "/tasks/2.events.jsonl", "");  // started, nothing written yet
  write(a + "/tasks/notes.txt", "not an event file\n");
  const std::string b = run_dir("orch-1-2-b");
  write(b + "/gang", "tasks=1 tasks_per_node=1 heartbeat_s=5 heartbeat_timeout_s=30\n");
  write(b + "/node_lost", marker_line({"n7", 0, "no heartbeat from task 0 on n7 for 31 s"}) + "\n");

  const std::int64_t before = wall_now_ms();
  Outcome o = observe({"orch-1-1-a", "orch-1-2-b", "orch-1-3-none"});
  ASSERT_TRUE(WIFEXITED(o.status));
  EXPECT_EQ(WEXITSTATUS(o.status), 0) << o.out;
  ObserveOutput out = split_observe_output(o.out);
  EXPECT_THAT(out.squeue, HasSubstr("squeue "));
  EXPECT_THAT(out.squeue, HasSubstr("--name=orch-1-1-a,orch-1-2-b,orch-1-3-none"));
  EXPECT_EQ(out.squeue.find("@@orchestrate"), std::string::npos);
  ASSERT_TRUE(out.tasks_read);
  ASSERT_TRUE(out.now_ms.has_value());
  EXPECT_GE(*out.now_ms, before - 1000);
  EXPECT_LE(*out.now_ms, wall_now_ms() + 1000);

  ASSERT_EQ(out.tasks.count("orch-1-1-a"), 1u);
  const TaskSnapshot& sa = out.tasks["orch-1-1-a"];
  ASSERT_TRUE(sa.gang.has_value());
  EXPECT_EQ(sa.gang->tasks, 3);
  EXPECT_FALSE(sa.marker.has_value());
  ASSERT_EQ(sa.tasks.size(), 3u);
  EXPECT_EQ(sa.tasks[0].rank, 0);
  EXPECT_EQ(sa.tasks[0].event, "heartbeat");
  EXPECT_EQ(sa.tasks[0].at_ms, 200);
  EXPECT_EQ(sa.tasks[0].node, "n1");
  EXPECT_EQ(sa.tasks[1].event, "progress");
  EXPECT_EQ(sa.tasks[1].at_ms, 250);
  EXPECT_EQ(sa.tasks[2].rank, 2);
  EXPECT_TRUE(sa.tasks[2].empty);

  const TaskSnapshot& sb = out.tasks["orch-1-2-b"];
  ASSERT_TRUE(sb.marker.has_value());
  EXPECT_EQ(sb.marker->node, "n7");
  EXPECT_TRUE(sb.tasks.empty());
  // A token with no run directory is named, with nothing in it.
  ASSERT_EQ(out.tasks.count("orch-1-3-none"), 1u);
  EXPECT_FALSE(out.tasks["orch-1-3-none"].gang.has_value());
}

TEST_F(ObserveCommandTest, SqueuesFailureIsTheCommandsStatus) {
  Outcome o = observe({"orch-1-1-a"}, {{"SQUEUE_STATUS", "1"}});
  ASSERT_TRUE(WIFEXITED(o.status));
  EXPECT_EQ(WEXITSTATUS(o.status), 1);
}

TEST_F(ObserveCommandTest, AVeryLongRecordIsCutAndNotRead) {
  const std::string a = run_dir("orch-1-1-a");
  write(a + "/tasks/0.events.jsonl",
        "{\"event\":\"checkpoint\",\"at_ms\":1,\"path\":\"" + std::string(10'000, 'x') + "\"}\n");
  ObserveOutput out = split_observe_output(observe({"orch-1-1-a"}).out);
  ASSERT_EQ(out.tasks["orch-1-1-a"].tasks.size(), 1u);
  EXPECT_FALSE(out.tasks["orch-1-1-a"].tasks[0].readable);
  EXPECT_FALSE(out.tasks["orch-1-1-a"].tasks[0].empty);
}

TEST(slurm_observe_output, WithoutTheMarkItIsAllSqueue) {
  ObserveOutput out = split_observe_output("123|orch-1-1-a|RUNNING\n");
  EXPECT_EQ(out.squeue, "123|orch-1-1-a|RUNNING\n");
  EXPECT_FALSE(out.tasks_read);
  EXPECT_TRUE(out.tasks.empty());
  // squeue printed nothing (none of the tokens is known to it): the clock is still read.
  ObserveOutput quiet =
      split_observe_output("\n@@orchestrate-tasks 1700000000123\n@T orch-1-1-a\n");
  EXPECT_EQ(quiet.squeue, "");
  EXPECT_EQ(quiet.now_ms, 1'700'000'000'123);
  EXPECT_EQ(quiet.tasks.count("orch-1-1-a"), 1u);
  // The mark with no clock: read, without a time (no heartbeat is judged then).
  ObserveOutput no_clock = split_observe_output("\n@@orchestrate-tasks \n@T orch-1-1-a\n");
  EXPECT_TRUE(no_clock.tasks_read);
  EXPECT_FALSE(no_clock.now_ms.has_value());
  EXPECT_EQ(no_clock.tasks.count("orch-1-1-a"), 1u);
}

TEST(slurm_observe_command, RefusesATokenThatIsNotOne) {
  auto command = observe_command({"orch-1-1-a", "a;b"}, "/shared");
  ASSERT_FALSE(command.ok());
  EXPECT_EQ(command.error().kind, ErrorKind::invalid);
}

TEST(slurm_node_lost_command, WritesTheMarkerThenCancels) {
  TempDir tmp;
  RunPaths p = run_paths(tmp.path() + "/root $x", "orch-4-1-z");
  fs::create_directories(p.dir);
  NodeLostMarker m{"alpha-n3", 2, "no heartbeat from task 2 on alpha-n3 for 31 s; 'q' $(x)"};
  auto command = node_lost_command(p, "orch-4-1-z", m);
  ASSERT_TRUE(command.ok()) << command.error().message;
  Outcome o = run({"/bin/sh", "-c", *command}, stand_in_path());
  ASSERT_TRUE(WIFEXITED(o.status));
  EXPECT_EQ(WEXITSTATUS(o.status), 0);
  EXPECT_EQ(o.out, "scancel --name=orch-4-1-z\n");
  auto back = parse_marker(read(p.node_lost));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->node, "alpha-n3");
  EXPECT_EQ(back->detail, m.detail);
  EXPECT_FALSE(fs::exists(p.node_lost + ".tmp"));
}

}  // namespace
}  // namespace orch::slurm
