// LocalSite with run_as (adapters/local/run_as.h): the job's processes run as the user while
// the agent stays root; the job gets its working and checkpoint directories and nothing of the
// run's control files; a path it could not reach fails the launch, naming it. Needs root (the
// tests run as root in CI): skipped otherwise, but for the refusal of a server that is not.

#include <gmock/gmock.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapters/local/run_as.h"
#include "scheduler/model/workdir.h"
#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class LocalSiteRunAsTest : public LocalSiteTest {
 protected:
  void SetUp() override {
    LocalSiteTest::SetUp();
    const passwd* pw = getpwnam("nobody");
    if (pw == nullptr) GTEST_SKIP() << "this machine has no user nobody";
    uid_ = pw->pw_uid;
    site_ = site_as("nobody");
  }
  std::unique_ptr<LocalSite> site_as(const std::string& user) {
    LocalSiteOptions o = make_site()->options();
    o.run_as = user;
    return std::make_unique<LocalSite>(o);
  }
  static std::string output(const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& l : lines) out += l + "\n";
    return out;
  }
  uid_t uid_ = 0;
};

struct stat stat_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st;
}

TEST_F(LocalSiteRunAsTest, TheJobRunsAsTheUserAndTheAgentAsRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  LaunchRequest r = request("as-user", "id -u; grep '^Uid:' /proc/$PPID/status; pwd");
  launch_ok(r);
  std::vector<std::string> lines;
  RunObservation obs = wait_exited("as-user", &lines);
  ASSERT_TRUE(obs.exit.has_value());
  EXPECT_EQ(obs.exit->exit_code, 0) << output(lines);
  EXPECT_THAT(output(lines), HasSubstr(std::to_string(uid_) + "\nUid:\t0\t0\t0\t0\n" +
                                       run_dir("as-user") + "/work\n"));
}

TEST_F(LocalSiteRunAsTest, TheJobGetsWorkAndNothingOfTheControlFiles) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  // Each try says whether it worked; all but the write in work/ must be denied.
  const std::string job =
      "try() { name=$1; shift; if (\"$@\") >/dev/null 2>&1; then echo $name=ok; "
      "else echo $name=denied; fi; }; "
      "try work sh -c 'echo data > $ORCH_RUN_DIR/mine'; "
      "try list ls ..; "
      "try read cat ../request.json; "
      "try append sh -c 'echo junk >> ../events.jsonl'; "
      "try unlink rm ../agent.lock; "
      "try move mv ../request.json ../x; "
      "try cancel touch ../cancel_requested; "
      "try kill kill -9 $PPID";
  launch_ok(request("control", job));
  std::vector<std::string> lines;
  RunObservation obs = wait_exited("control", &lines);
  ASSERT_TRUE(obs.exit.has_value());
  EXPECT_EQ(obs.exit->exit_code, 0) << output(lines);
  EXPECT_EQ(output(lines),
            "work=ok\nlist=denied\nread=denied\nappend=denied\nunlink=denied\nmove=denied\n"
            "cancel=denied\nkill=denied\n");
  const std::string dir = run_dir("control");
  EXPECT_EQ(stat_of(dir).st_mode & 07777, 0701u);  // searchable, not listable
  EXPECT_EQ(stat_of(dir + "/work").st_uid, uid_);
  EXPECT_EQ(stat_of(dir + "/work/mine").st_uid, uid_);
  for (const char* file :
       {"request.json", "events.jsonl", "agent.lock", "agent.pid", "output.log"}) {
    SCOPED_TRACE(file);
    const struct stat st = stat_of(dir + "/" + file);
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_mode & 077, 0u);
  }
  EXPECT_FALSE(local::path_exists(dir + "/cancel_requested"));
}

TEST_F(LocalSiteRunAsTest, TheCheckpointDirectoryIsTheJobsOwn) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  LaunchRequest r = request("ckpt", "echo saved > $ORCH_CHECKPOINT_DIR/step-1; echo rc=$?");
  r.checkpoint_dir = root_ + "/checkpoints/job-7/run1";
  r.env["ORCH_CHECKPOINT_DIR"] = r.checkpoint_dir;
  launch_ok(r);
  std::vector<std::string> lines;
  wait_exited("ckpt", &lines);
  EXPECT_THAT(output(lines), HasSubstr("rc=0"));
  EXPECT_EQ(stat_of(root_ + "/checkpoints/job-7").st_uid, uid_);
  EXPECT_EQ(stat_of(r.checkpoint_dir).st_uid, uid_);
  EXPECT_EQ(stat_of(r.checkpoint_dir).st_mode & 07777, 0700u);
  EXPECT_EQ(stat_of(root_ + "/checkpoints").st_uid, 0u);  // the site's, searchable
  EXPECT_NE(stat_of(root_ + "/checkpoints").st_mode & S_IXOTH, 0u);
}

TEST_F(LocalSiteRunAsTest, WhatTheUserCannotReadFailsTheLaunchNamingIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  // A checkpoint to resume from in a directory that is root's alone, outside the site's storage.
  const std::string closed = root_ + "/closed";
  ASSERT_EQ(mkdir(closed.c_str(), 0700), 0);
  ASSERT_TRUE(local::write_file_atomic(closed + "/step-5.ckpt", "weights").ok());
  LaunchRequest r = request("unreachable", "echo ran");
  r.env["ORCH_RESUME_FROM"] = closed + "/step-5.ckpt";
  auto launched = site_->launch(r);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.error().kind, ErrorKind::invalid);
  EXPECT_THAT(launched.error().message,
              HasSubstr("site loc: the job's user nobody cannot search " + closed +
                        " (Permission denied), on the way to the checkpoint it resumes from"));
  // A replica of the site's own storage, made by a copy as root, is opened to it instead.
  const std::string replica = root_ + "/checkpoints/.orchestrate/replicas/job-7/step-5";
  ASSERT_TRUE(local::make_dirs(replica, 0700).ok());
  ASSERT_EQ(chown(replica.c_str(), uid_, 0), 0);  // rsync -a keeps the job user's ownership
  r.token = "replica";
  r.env["ORCH_RESUME_FROM"] = replica;
  launch_ok(r);
  std::vector<std::string> lines;
  wait_exited("replica", &lines);
  EXPECT_THAT(output(lines), HasSubstr("ran"));
}

// Before anything else makes them owner-only (a probe's directory, a copy's parents under the
// server's umask 077), the site makes its directories and what is missing above them searchable.
TEST_F(LocalSiteRunAsTest, TheSitesStorageIsMadeSearchableFirst) {
  LocalSiteOptions o = site_->options();
  o.root = root_ + "/new/site";
  o.checkpoints_dir = root_ + "/shared/ckpt";
  LocalSite site(o);
  ASSERT_TRUE(site.prepare_storage().ok());
  for (const char* dir :
       {"/new", "/new/site", "/new/site/runs", "/new/site/datasets", "/shared", "/shared/ckpt"}) {
    SCOPED_TRACE(dir);
    EXPECT_EQ(stat_of(root_ + dir).st_mode & 07777, 0701u);
  }
  EXPECT_FALSE(local::path_exists(root_ + "/new/site/checkpoints"));  // elsewhere
}

TEST_F(LocalSiteRunAsTest, AUserThatCannotBeUsedFailsTheLaunch) {
  auto unknown = site_as("no-such-user-xyz")->launch(request("unknown", "true"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::invalid);
  if (geteuid() == 0) {
    EXPECT_THAT(unknown.error().message,
                HasSubstr("local.run_as no-such-user-xyz: no such user on this machine"));
    auto root = site_as("root")->launch(request("root", "true"));
    ASSERT_FALSE(root.ok());
    EXPECT_THAT(root.error().message, HasSubstr("that user is root"));
  } else {
    EXPECT_THAT(unknown.error().message, HasSubstr("not root, so it cannot start jobs as"));
  }
}

}  // namespace
}  // namespace orch::testing

namespace orch::testing {
namespace {

TEST_F(LocalSiteRunAsTest, TheJobsUserExtractsItsCodeAndRunsItsSetupThere) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const std::string hash(64, 'b');
  const std::string src = root_ + "/src";
  std::filesystem::create_directories(src);
  std::ofstream(src + "/hello.txt") << "hello\n";
  std::filesystem::create_directories(code_dir(root_));
  const std::string archive = code_archive_path(root_, hash);
  ASSERT_EQ(
      std::system(("tar -C " + src + " -cf " + archive + " . && chmod 0600 " + archive).c_str()),
      0);
  LaunchRequest r = request("code-as-user", "cat hello.txt; test -d .venv && echo venv-ok");
  r.code_sha256 = hash;
  r.code_archive = archive;
  r.workdir = code_tree_path(root_, hash);
  r.env["ORCH_WORKDIR"] = r.workdir;
  r.setup = "mkdir .venv";
  r.setup_key = setup_key("loc", hash, r.setup, "");
  r.setup_dir = setup_dir_path(root_, r.setup_key);
  launch_ok(r);
  std::vector<std::string> lines;
  RunObservation obs = wait_exited("code-as-user", &lines);
  ASSERT_TRUE(obs.exit.has_value());
  EXPECT_EQ(obs.exit->exit_code, 0) << output(lines);
  EXPECT_THAT(output(lines), HasSubstr("hello\nvenv-ok\n"));
  EXPECT_EQ(stat_of(r.workdir).st_uid, uid_);
  EXPECT_EQ(stat_of(r.workdir + "/.venv").st_uid, uid_);
}

}  // namespace
}  // namespace orch::testing
