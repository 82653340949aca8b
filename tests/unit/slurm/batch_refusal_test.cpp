// What make_batch_plan refuses, and the edge values it takes: a launch that cannot be submitted
// safely (a token, node name, path or value that would break the script or the command line) is
// refused naming what; an agent path that is not absolute; the longest and oddest values that
// are still fine; a job name cut at a character boundary in sbatch's comment.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "adapters/slurm/batch_script.h"
#include "tests/unit/slurm/batch_fixture.h"

namespace orch::slurm {
namespace {

using namespace ::orch::slurm::batch_fixture;  // NOLINT(google-build-using-namespace)
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(slurm_parse_batch_plan, RefusesWhatCannotBeSubmittedSafely) {
  struct Case {
    std::string what;
    LaunchRequest request;
    ClusterSpec cluster;
    std::string message;
  };
  std::vector<Case> cases;
  auto add = [&](std::string what, auto change, std::string message) {
    Case c{std::move(what), basic_request(), basic_cluster(), std::move(message)};
    change(c.request, c.cluster);
    cases.push_back(std::move(c));
  };
  for (const std::string& token :
       {std::string(""), std::string("../x"), std::string("a b"), std::string(".hidden"),
        std::string(129, 'a'), std::string("t$x"), std::string("t\nx"), std::string("t;x"),
        std::string("t,x")}) {
    add(
        "token " + token, [token](LaunchRequest& r, ClusterSpec&) { r.token = token; },
        "launch token");
  }
  for (const std::string& name : {std::string("1X"), std::string("A-B"), std::string(""),
                                  std::string("A=B"), std::string("A B"), std::string("$(x)")}) {
    add(
        "env name " + name, [name](LaunchRequest& r, ClusterSpec&) { r.env[name] = "v"; },
        "environment variable name");
  }
  add(
      "NUL in an env value",
      [](LaunchRequest& r, ClusterSpec&) { r.env["X"] = std::string("a\0b", 3); },
      "environment variable X");
  add(
      "NUL in the command",
      [](LaunchRequest& r, ClusterSpec&) { r.command = std::string("a\0b", 3); },
      "the job's command");
  add(
      "NUL in the partition",
      [](LaunchRequest&, ClusterSpec& c) { c.slurm.partition = std::string("gpu\0x", 5); }, "NUL");
  add(
      "relative root", [](LaunchRequest&, ClusterSpec& c) { c.storage_root = "orch"; },
      "absolute path");
  add(
      "home-relative root", [](LaunchRequest&, ClusterSpec& c) { c.storage_root = "~/orch"; },
      "absolute path");
  add(
      "empty root", [](LaunchRequest&, ClusterSpec& c) { c.storage_root = ""; }, "absolute path");
  add(
      "backslash root", [](LaunchRequest&, ClusterSpec& c) { c.storage_root = "/a\\b"; },
      "backslash");
  add(
      "newline root", [](LaunchRequest&, ClusterSpec& c) { c.storage_root = "/a\nb"; },
      "control character");
  add(
      "no nodes", [](LaunchRequest& r, ClusterSpec&) { r.nodes = 0; }, "at least one node");
  add(
      "no tasks per node", [](LaunchRequest& r, ClusterSpec&) { r.tasks_per_node = 0; },
      "at least one task per node");
  add(
      "negative heartbeat", [](LaunchRequest& r, ClusterSpec&) { r.heartbeat_timeout_s = -1; },
      "seconds >= 0");
  add(
      "negative gpus", [](LaunchRequest& r, ClusterSpec&) { r.gpus_per_node = -1; },
      "gpus_per_node");
  for (const std::string& node : {std::string(""), std::string("a,b"), std::string("n[1-2]"),
                                  std::string("a b"), std::string("a\nb")}) {
    add(
        "exclude " + node,
        [node](LaunchRequest& r, ClusterSpec&) {
          r.exclude_nodes = {"ok-1", node};
        },
        "cannot go into sbatch --exclude");
  }
  for (const Case& c : cases) {
    auto plan = plan_of(c.request, c.cluster);
    ASSERT_FALSE(plan.ok()) << c.what;
    EXPECT_EQ(plan.error().kind, ErrorKind::invalid) << c.what;
    EXPECT_THAT(plan.error().message, HasSubstr(c.message)) << c.what;
  }
}

TEST(slurm_parse_batch_plan, RefusesAnAgentPathThatIsNotAbsolute) {
  for (const std::string& agent : {std::string(""), std::string("bin/orchestrate-agent")}) {
    auto plan = make_batch_plan(basic_request(), basic_cluster(), agent);
    ASSERT_FALSE(plan.ok()) << agent;
    EXPECT_THAT(plan.error().message, HasSubstr("is not absolute")) << agent;
  }
}

// A gang of 2 nodes x 2 tasks, run by the stand-in srun: every task gets its own place, its own
// event file, and the rendezvous the script found.
TEST(slurm_parse_batch_plan, AcceptsValidEdgeValues) {
  LaunchRequest r = basic_request();
  r.token = std::string(128, 'a');
  r.job_name = std::string("\0nul in the name is shown as ?", 30) + std::string(300, 'n');
  r.env = {{"_under", "x"}, {"lower_case9", "y"}};
  auto plan = plan_of(r, basic_cluster());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto argv = sbatch_argv_of(plan->submit_command);
  ASSERT_GE(argv.size(), 4u);
  EXPECT_THAT(argv[3], StartsWith("--comment=orchestrate token=" + r.token + " name=?nul"));
  // The name is cut to 200 bytes in the comment.
  EXPECT_EQ(argv[3].size(), std::string("--comment=orchestrate token= name=").size() + 128 + 200);
}

TEST(slurm_parse_batch_plan, CommentNameIsCutAtACharacterBoundary) {
  LaunchRequest r = basic_request();
  r.job_name = std::string(199, 'a') + "\xc3\xa9\xc3\xa9";  // 'é' twice, straddling byte 200
  auto plan = plan_of(r, basic_cluster());
  ASSERT_TRUE(plan.ok());
  auto argv = sbatch_argv_of(plan->submit_command);
  ASSERT_GE(argv.size(), 4u);
  EXPECT_THAT(argv[3], ::testing::EndsWith(std::string(199, 'a')));
}

}  // namespace
}  // namespace orch::slurm
