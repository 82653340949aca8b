// LocalSite launch, observation and lookup against real agent processes.

#include <gmock/gmock.h>
#include <sys/stat.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "adapters/local/run_dir.h"
#include "scheduler/model/progress_line.h"
#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

int start_event_field(const std::string& events_path, const char* field) {
  int value = 0;
  eventually([&] {
    std::istringstream in(slurp(events_path));
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("event", "") == "start") {
        value = j.value(field, 0);
        return true;
      }
    }
    return false;
  });
  return value;
}

TEST_F(LocalSiteTest, LaunchRunsJobAndReportsLinesAndExitCodeZero) {
  auto r = request("run-ok",
                   "echo hello; echo '@orchestrate {\"event\":\"progress\",\"step\":5}';"
                   " sleep 0.3; echo done");
  LaunchResult launched = launch_ok(r);
  EXPECT_GT(std::stoi(launched.site_job_id), 1);
  EXPECT_THAT(launched.nodes, ElementsAre("loc-n0"));

  auto first = site_->observe("run-ok", 0);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->phase, RunPhase::running);
  EXPECT_EQ(first->site_job_id, launched.site_job_id);

  std::vector<std::string> lines;
  RunObservation last = wait_exited("run-ok", &lines);
  ASSERT_EQ(last.phase, RunPhase::exited);
  ASSERT_TRUE(last.exit.has_value());
  EXPECT_EQ(last.exit->exit_code, 0);
  EXPECT_FALSE(last.exit->signal.has_value());
  EXPECT_THAT(lines, ElementsAre("hello", HasSubstr("@orchestrate"), "done"));

  auto parsed = parse_progress_line(lines[1]);
  ASSERT_TRUE(parsed.has_value());
  ASSERT_TRUE(parsed->ok()) << parsed->error().message;
  EXPECT_EQ(std::get<ProgressReport>(parsed->value()).step, 5);

  // Offsets: reading again from the end yields nothing new.
  auto again = site_->observe("run-ok", last.next_offset);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->new_lines.empty());
  EXPECT_EQ(again->next_offset, last.next_offset);
}

TEST_F(LocalSiteTest, NonZeroExitCodeIsReported) {
  launch_ok(request("run-fail", "echo failing >&2; exit 3"));
  std::vector<std::string> lines;
  RunObservation last = wait_exited("run-fail", &lines);
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 3);
  EXPECT_THAT(lines, Contains("failing"));  // stderr lands in the same log
}

TEST_F(LocalSiteTest, JobKilledBySignalIsRecordedByTheAgent) {
  launch_ok(request("run-sig", "sleep 30"));
  int child = start_event_field(run_dir("run-sig") + "/events.jsonl", "pid");
  ASSERT_GT(child, 1);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  RunObservation last = wait_exited("run-sig");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_FALSE(last.exit->exit_code.has_value());
  EXPECT_EQ(last.exit->signal, SIGKILL);
  EXPECT_THAT(last.exit->detail, ::testing::Not(HasSubstr("vanished")));
}

TEST_F(LocalSiteTest, KilledAgentIsReportedAsVanished) {
  LaunchResult launched = launch_ok(request("run-gone", "sleep 30"));
  ASSERT_EQ(kill(std::stoi(launched.site_job_id), SIGKILL), 0);
  RunObservation last = wait_exited("run-gone");
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->signal, SIGKILL);
  EXPECT_EQ(last.exit->detail, "agent vanished without an exit record");
}

TEST_F(LocalSiteTest, LaunchIsIdempotentPerToken) {
  auto r = request("run-once", "echo started >> \"$ORCH_RUN_DIR/../../../count\"; sleep 0.2");
  LaunchResult a = launch_ok(r);
  EXPECT_FALSE(a.adopted) << "the first launch starts the run";
  auto b = site_->launch(r);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_TRUE(b->adopted) << "the second returns the first, adopted";
  EXPECT_EQ(a.site_job_id, b->site_job_id);
  EXPECT_EQ(a.nodes, b->nodes);
  ASSERT_EQ(wait_exited("run-once").phase, RunPhase::exited);
  EXPECT_EQ(slurp(root_ + "/count"), "started\n");
  std::string events = slurp(run_dir("run-once") + "/events.jsonl");
  EXPECT_EQ(std::count(events.begin(), events.end(), '\n'), 2);  // one start, one exit
}

TEST_F(LocalSiteTest, ARunDirectoryWhoseAgentNeverStartedIsLaunchedNotAdopted) {
  // A server that crashed between creating the run directory and starting the agent.
  std::filesystem::create_directories(run_dir("run-half"));
  auto found = site_->find("run-half");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_FALSE(found->has_value()) << "not a launch yet";
  LaunchResult launched = launch_ok(request("run-half", "echo started"));
  EXPECT_FALSE(launched.adopted) << "the agent starts now";
  EXPECT_EQ(wait_exited("run-half").exit->exit_code, 0);
  auto again = site_->launch(request("run-half", "echo started"));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->adopted);
  EXPECT_EQ(again->site_job_id, launched.site_job_id);
}

TEST_F(LocalSiteTest, FindKnowsLaunchedTokensOnly) {
  auto none = site_->find("never-launched");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto unknown = site_->observe("never-launched", 0);
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->phase, RunPhase::unknown);

  LaunchResult launched = launch_ok(request("run-find", "true"));
  auto found = site_->find("run-find");
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->site_job_id, launched.site_job_id);
  EXPECT_EQ((*found)->nodes, launched.nodes);
}

TEST_F(LocalSiteTest, BadTokensAreRejected) {
  for (const std::string& token :
       std::vector<std::string>{"", "../escape", "a b", "a/b", ".hidden", std::string(200, 'x')}) {
    auto r = site_->launch(request(token, "true"));
    ASSERT_FALSE(r.ok()) << token;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid) << token;
    auto obs = site_->observe(token, 0);
    ASSERT_FALSE(obs.ok()) << token;
    EXPECT_EQ(obs.error().kind, ErrorKind::invalid);
  }
  EXPECT_FALSE(std::filesystem::exists(root_ + "/escape"));
}

TEST_F(LocalSiteTest, NodesHonourExclusions) {
  auto r = request("run-excl", "true");
  r.exclude_nodes = {"loc-n0"};
  LaunchResult launched = launch_ok(r);
  EXPECT_THAT(launched.nodes, ElementsAre("loc-n1"));

  auto too_many = request("run-two", "true");
  too_many.nodes = 2;
  too_many.exclude_nodes = {"loc-n1"};
  auto rejected = site_->launch(too_many);
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().kind, ErrorKind::invalid);
  EXPECT_THAT(rejected.error().message, HasSubstr("needs 2"));
  EXPECT_FALSE(std::filesystem::exists(run_dir("run-two")));
}

// Resuming from a copy on one node's own disk: the run starts there (tiered checkpoints).
TEST_F(LocalSiteTest, ARunAskedToStartOnANodeStartsThere) {
  auto r = request("run-on", "true");
  r.on_node = "loc-n1";
  EXPECT_THAT(launch_ok(r).nodes, ElementsAre("loc-n1"));

  auto excluded = request("run-on-excluded", "true");
  excluded.on_node = "loc-n1";
  excluded.exclude_nodes = {"loc-n1"};
  auto refused = site_->launch(excluded);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("must run on node loc-n1"));
  auto unknown = request("run-on-unknown", "true");
  unknown.on_node = "loc-n9";
  EXPECT_FALSE(site_->launch(unknown).ok());
}

// A gang that lost a node relaunches on its survivors and a hot spare: those nodes first.
TEST_F(LocalSiteTest, ARunGetsTheNodesItMustIncludeFirst) {
  auto r = request("run-pinned", "true");
  r.nodes = 2;
  r.include_nodes = {"loc-n1"};
  EXPECT_THAT(launch_ok(r).nodes, ElementsAre("loc-n1", "loc-n0"));
}

// A run of two virtual nodes is two tasks, each told its place and its node (issue 14).
TEST_F(LocalSiteTest, JobSeesItsEnvironment) {
  auto r = request("run-env",
                   "echo \"$ORCH_NODE_RANK $ORCH_NODE_NAME $ORCH_TOKEN $ORCH_JOB_ID $ORCH_ATTEMPT"
                   " $ORCH_GPUS $ORCH_NODES $MY_VAR\"; echo \"$ORCH_NODE_RANK $(pwd)\";"
                   " echo \"$ORCH_NODE_RANK $ORCH_RUN_DIR\"");
  r.nodes = 2;
  r.gpus_per_node = 4;
  r.env = {{"MY_VAR", "from-request"}};
  launch_ok(r);
  std::vector<std::string> lines;
  ASSERT_EQ(wait_exited("run-env", &lines).exit->exit_code, 0);
  std::sort(lines.begin(), lines.end());
  const std::string work = run_dir("run-env") + "/work";
  // Each line tagged with its task's node and rank (a gang's tasks share the log: issue 41).
  EXPECT_THAT(lines, ElementsAre("[loc-n0/0] 0 " + work, "[loc-n0/0] 0 " + work,
                                 "[loc-n0/0] 0 loc-n0 run-env 7 2 8 loc-n0,loc-n1 from-request",
                                 "[loc-n1/1] 1 " + work, "[loc-n1/1] 1 " + work,
                                 "[loc-n1/1] 1 loc-n1 run-env 7 2 8 loc-n0,loc-n1 from-request"));
  auto stored = nlohmann::json::parse(slurp(run_dir("run-env") + "/request.json"));
  EXPECT_EQ(stored["assigned_nodes"], nlohmann::json::array({"loc-n0", "loc-n1"}));
  EXPECT_EQ(stored["command"], r.command);
}

// The job's own checkpoint directory (issue 37): made before it starts, 0700, and never a link.
TEST_F(LocalSiteTest, TheJobsCheckpointDirectoryIsMadeBeforeItStarts) {
  const std::string dir = root_ + "/checkpoints/job-7";
  auto r = request("run-ckpt", "echo \"$ORCH_CHECKPOINT_DIR\"; test -d \"$ORCH_CHECKPOINT_DIR\"");
  r.checkpoint_dir = dir;
  r.env = {{"ORCH_CHECKPOINT_DIR", dir}};  // as the brain sets it
  launch_ok(r);
  std::vector<std::string> lines;
  ASSERT_EQ(wait_exited("run-ckpt", &lines).exit->exit_code, 0);
  EXPECT_THAT(lines, ElementsAre(dir));
  struct stat st {};
  ASSERT_EQ(lstat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  // A link where another job's directory should be (pointing at this job's): nothing starts.
  std::filesystem::create_directory_symlink(dir, root_ + "/checkpoints/job-8");
  auto linked = request("run-linked", "echo ran");
  linked.job_id = 8;
  linked.checkpoint_dir = root_ + "/checkpoints/job-8";
  auto refused = site_->launch(linked);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid);
  EXPECT_THAT(refused.error().message, HasSubstr("is not a directory"));
  EXPECT_FALSE(std::filesystem::exists(run_dir("run-linked")));
}

TEST_F(LocalSiteTest, ReadOutputReturnsBytesAndInventoryListsNodes) {
  launch_ok(request("run-out", "printf 'abc\\ndef'"));
  ASSERT_EQ(wait_exited("run-out").phase, RunPhase::exited);
  auto all = site_->read_output("run-out", 0, 100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, "abc\ndef");
  auto part = site_->read_output("run-out", 4, 2);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(*part, "de");
  // The run is over, so the unterminated last line is delivered too.
  auto obs = site_->observe("run-out", 0);
  ASSERT_TRUE(obs.ok());
  EXPECT_THAT(obs->new_lines, ElementsAre("abc", "def"));
  EXPECT_EQ(obs->next_offset, 7u);
  auto missing = site_->read_output("nope", 0, 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);

  auto inv = site_->inventory();
  ASSERT_TRUE(inv.ok());
  ASSERT_EQ(inv->nodes.size(), 2u);
  EXPECT_EQ(inv->nodes[1].name, "loc-n1");
  EXPECT_EQ(inv->nodes[1].gpus, 4);
  EXPECT_TRUE(inv->nodes[1].healthy);
}

TEST_F(LocalSiteTest, MissingAgentIsAnActionableError) {
  LocalSiteOptions o = site_->options();
  o.agent_path = root_ + "/no-such-agent";
  LocalSite broken(o);
  auto r = broken.launch(request("run-noagent", "true"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("no-such-agent"));
}

}  // namespace
}  // namespace orch::testing
