// Issue 40 on local sites, end to end: `orchestrate job submit` packs and uploads a project's
// workdir, the server stages it to the site it places the job on (a transfer from its code
// store, once per hash and site: counted from its transfer records), every task starts in the
// extracted tree, the setup runs once for two jobs with the same key, and a failing setup fails
// the job setup_failed without spending an infrastructure restart.
#include <filesystem>
#include <string>

#include <gmock/gmock.h>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class WorkdirSitesE2eTest : public E2eTest {
 protected:
  // A job file <name>.yaml whose workdir is the directory `code` beside it (hello.txt), for
  // `cluster`: jobs that share `code` share its archive.
  std::string project(const std::string& name, const std::string& setup, const std::string& cluster,
                      const std::string& code = "code") {
    const std::string root = dir_->path() + "/" + code;
    fs::create_directories(root);
    testkit::open_to_jobs(dir_->path());
    write_file(root + "/hello.txt", "hello\n");
    const std::string spec = dir_->path() + "/" + name + ".yaml";
    write_file(spec, "name: " + name + "\nworkdir: " + code + "\nsetup: \"" + setup +
                         "\"\n"
                         "command: echo \"in $(pwd -P)\"; cat hello.txt; test -d .venv && echo "
                         "venv-ok\n"
                         "resources: {nodes: 1, gpus_per_node: 1}\n"
                         "placement: {allowed: [" +
                         cluster + "]}\n" + restart_yaml(0));
    return spec;
  }

  std::string logs(std::int64_t id) {
    return call(url_, "GET", "/api/v1/jobs/" + std::to_string(id) + "/logs").body;
  }
};

TEST_F(WorkdirSitesE2eTest, AJobStartsInItsCodeWhichTravelsOncePerHashAndSite) {
  const std::string setup = "echo run >> setup_runs; mkdir -p .venv; echo made";
  const std::int64_t first = submit_file(project("p1", setup, "alpha"));
  ASSERT_FALSE(succeeded_attempts(first).is_null());
  const std::string hash = job(first)["spec"]["workdir"]["sha256"].get<std::string>();
  const std::string tree = state_ + "/sites/alpha/code/" + hash;
  const std::string out = logs(first);
  EXPECT_THAT(out, HasSubstr("in " + fs::canonical(tree).string()));
  EXPECT_THAT(out, HasSubstr("hello\nvenv-ok"));
  EXPECT_THAT(out, HasSubstr("[setup] made"));
  EXPECT_EQ(code_copies_to("alpha"), 1);

  // The same code and setup again: nothing sent, the setup cached.
  const std::int64_t second = submit_file(project("p2", setup, "alpha"));
  ASSERT_FALSE(succeeded_attempts(second).is_null());
  EXPECT_THAT(logs(second), HasSubstr("[setup] cached"));
  EXPECT_EQ(read_file(tree + "/setup_runs"), "run\n");
  EXPECT_EQ(code_copies_to("alpha"), 1);

  // At another site: sent there once.
  const std::int64_t third = submit_file(project("p3", setup, "beta"));
  ASSERT_FALSE(succeeded_attempts(third).is_null());
  EXPECT_EQ(code_copies_to("beta"), 1);
  EXPECT_EQ(code_copies_to("alpha"), 1);
}

TEST_F(WorkdirSitesE2eTest, AFailingSetupFailsTheJobSetupFailedWithoutAnInfraRestart) {
  const std::int64_t id =
      submit_file(project("bad", "echo pip-says-no-network >&2; exit 3", "alpha", "badcode"));
  json done = wait_final(id);
  ASSERT_FALSE(done.is_null());
  EXPECT_EQ(done["state"], "failed") << done.dump();
  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u) << list.dump();
  EXPECT_EQ(list[0]["cause"], "setup_failed") << list[0].dump();
  EXPECT_THAT(list.dump() + done.dump(), HasSubstr("pip-says-no-network"));
  EXPECT_THAT(logs(id), ::testing::Not(HasSubstr("venv-ok")));
}

}  // namespace
}  // namespace orch::e2e
