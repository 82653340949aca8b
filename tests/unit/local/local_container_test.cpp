// Issue 40, item 4: a job's `container:` on a local site. With local.containers: apptainer each
// task's command runs under `apptainer exec --nv --bind <the site's directories> --pwd <its
// directory> IMAGE`; without a runtime the launch is refused. Apptainer is not a Debian 12
// package, so the test puts a stand-in first on the job's PATH: it records its words, then runs
// what follows the image in --pwd, as apptainer would (in no image).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kApptainerStandIn = R"(#!/bin/sh
printf '%s\n' "$@" > "$(dirname "$0")/words"
[ "$1" = exec ] || { echo "stand-in: only exec" >&2; exit 64; }
shift
dir=
while :; do
  case "$1" in
    --nv) shift ;;
    --bind) shift 2 ;;
    --pwd) dir=$2; shift 2 ;;
    *) break ;;
  esac
done
export APPTAINER_STANDIN_IMAGE="$1"
shift
[ -z "$dir" ] || cd "$dir" || exit 65
exec "$@"
)";

class LocalContainerTest : public LocalSiteTest {
 protected:
  void SetUp() override {
    LocalSiteTest::SetUp();
    bin_ = root_ + "/standin-bin";
    std::filesystem::create_directories(bin_);
    std::ofstream(bin_ + "/apptainer") << kApptainerStandIn;
    chmod((bin_ + "/apptainer").c_str(), 0755);
  }

  std::unique_ptr<LocalSite> site_with(ContainerRuntime runtime) {
    LocalSiteOptions o;
    o.name = "loc";
    o.root = root_;
    o.nodes = 1;
    o.agent_path = kAgentPath;
    o.containers = runtime;
    return std::make_unique<LocalSite>(o);
  }

  LaunchRequest in_image(const std::string& token, const std::string& command) {
    LaunchRequest r = request(token, command);
    r.container.image = "docker://python:3.11";
    r.container.mounts = {{"/data", "/data", true}};
    r.env["PATH"] = bin_ + ":" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/bin");
    return r;
  }

  std::string bin_;
};

TEST_F(LocalContainerTest, AnApptainerSiteRunsTheCommandInTheImage) {
  site_ = site_with(ContainerRuntime::apptainer);
  launch_ok(in_image("c-run", "echo \"$APPTAINER_STANDIN_IMAGE in $(pwd)\""));
  std::vector<std::string> lines;
  RunObservation last = wait_exited("c-run", &lines);
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 0);
  const std::string work = site_->run_dir("c-run") + "/work";
  EXPECT_THAT(lines, ElementsAre("docker://python:3.11 in " + work));
  std::vector<std::string> words;
  std::ifstream in(bin_ + "/words");
  for (std::string w; std::getline(in, w);) words.push_back(w);
  ASSERT_GE(words.size(), 7u);
  EXPECT_THAT(std::vector<std::string>(words.begin(), words.begin() + 7),
              ElementsAre("exec", "--nv", "--bind", root_ + ":" + root_ + ",/data:/data:ro",
                          "--pwd", work, "docker://python:3.11"));
  EXPECT_THAT(words, ::testing::Contains(HasSubstr("echo")));
}

TEST_F(LocalContainerTest, ASiteWithoutARuntimeRefusesTheLaunch) {
  site_ = site_with(ContainerRuntime::none);
  auto launched = site_->launch(in_image("c-none", "true"));
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.error().kind, ErrorKind::invalid);
  EXPECT_THAT(launched.error().message, HasSubstr("local.containers is none"));
}

}  // namespace
}  // namespace orch::testing
