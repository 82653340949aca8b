// The shell snippets of scheduler/model/workdir.h through a real /bin/sh, in a temporary
// directory standing for a site's storage root: the code extracted once and atomically, a link
// out of the tree refused, the setup run once per key under its lock and cached, a failed setup
// leaving its marker.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scheduler/model/workdir.h"

namespace orch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kHash(64, 'c');

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

int count_lines(const fs::path& p) {
  const std::string t = slurp(p);
  return static_cast<int>(std::count(t.begin(), t.end(), '\n'));
}

class SnippetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "orch-workdir-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    request_.code_sha256 = kHash;
    request_.code_archive = code_archive_path(root_.string(), kHash);
    request_.workdir = code_tree_path(root_.string(), kHash);
    fs::create_directories(root_ / "run");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // The tree under src/ packed as the site's archive (what staging puts there).
  void pack(const std::string& extra = "") {
    const std::string cmd = "cd " + (root_ / "src").string() + " && " + extra + "tar -cf " +
                            request_.code_archive + " .";
    fs::create_directories(fs::path(request_.code_archive).parent_path());
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  void with_setup(const std::string& setup) {
    request_.setup = setup;
    request_.setup_key = setup_key("site", kHash, setup, "");
    request_.setup_dir = setup_dir_path(root_.string(), request_.setup_key);
  }

  // Runs `script` under /bin/sh with the snippets' variables, `copies` at once; the exit status
  // of each, its output in out.<i>.
  std::vector<int> run(const std::string& script, int copies = 1) {
    spit(root_ / "s.sh", script);
    std::string env;
    for (const auto& [k, v] : workdir_env(request_, (root_ / "run/setup_failed").string())) {
      std::string quoted;
      for (char c : v) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      env += "export " + k + "='" + quoted + "'\n";
    }
    spit(root_ / "env.sh", env);
    std::string cmd = "cd " + root_.string() + " && . ./env.sh || exit 1; ";
    for (int i = 0; i < copies; ++i) {
      cmd += "{ sh ./s.sh >out." + std::to_string(i) + " 2>&1; echo $? >rc." + std::to_string(i) +
             "; } & ";
    }
    cmd += "wait";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    std::vector<int> rcs;
    for (int i = 0; i < copies; ++i)
      rcs.push_back(std::stoi(slurp(root_ / ("rc." + std::to_string(i)))));
    return rcs;
  }

  std::string out(int i = 0) { return slurp(root_ / ("out." + std::to_string(i))); }

  bool leftovers() {
    for (const auto& e : fs::directory_iterator(root_ / "code")) {
      if (e.path().filename().string().find(".part.") != std::string::npos) return true;
    }
    return false;
  }

  fs::path root_;
  LaunchRequest request_;
};

TEST_F(SnippetTest, ExtractsTheTreeOnceBesideItAndRenamesItIntoPlace) {
  spit(root_ / "src/mypkg/train.py", "print('hi')\n");
  pack();
  EXPECT_EQ(run(std::string(code_extract_snippet())), std::vector<int>{0}) << out();
  EXPECT_EQ(slurp(fs::path(request_.workdir) / "mypkg/train.py"), "print('hi')\n");
  EXPECT_FALSE(leftovers());
  // Already there: not extracted again (a file the jobs added stays).
  spit(fs::path(request_.workdir) / ".venv/marker", "kept\n");
  EXPECT_EQ(run(std::string(code_extract_snippet())), std::vector<int>{0});
  EXPECT_EQ(slurp(fs::path(request_.workdir) / ".venv/marker"), "kept\n");
}

TEST_F(SnippetTest, ConcurrentStagersLeaveOneWholeTree) {
  for (int i = 0; i < 50; ++i) spit(root_ / ("src/f" + std::to_string(i)), std::string(4096, 'x'));
  pack();
  EXPECT_EQ(run(std::string(code_extract_snippet()), 4), std::vector<int>(4, 0))
      << out(0) << out(1) << out(2) << out(3);
  EXPECT_EQ(fs::file_size(fs::path(request_.workdir) / "f49"), 4096U);
  EXPECT_FALSE(leftovers());
}

TEST_F(SnippetTest, ALinkOutOfTheTreeIsRefusedAndNothingIsLeft) {
  spit(root_ / "src/ok.txt", "ok\n");
  pack("ln -s /etc evil && ");
  EXPECT_EQ(run(std::string(code_extract_snippet())), std::vector<int>{1});
  EXPECT_THAT(out(), HasSubstr("symbolic link out of its tree"));
  EXPECT_FALSE(fs::exists(request_.workdir));
  EXPECT_FALSE(leftovers());
}

TEST_F(SnippetTest, ALinkInsideTheTreeIsKept) {
  spit(root_ / "src/data/a.txt", "a\n");
  pack("ln -s data/a.txt link && ");
  EXPECT_EQ(run(std::string(code_extract_snippet())), std::vector<int>{0}) << out();
  EXPECT_EQ(slurp(fs::path(request_.workdir) / "link"), "a\n");
}

TEST_F(SnippetTest, AMissingArchiveFailsSayingSo) {
  EXPECT_EQ(run(std::string(code_extract_snippet())), std::vector<int>{1});
  EXPECT_THAT(out(), HasSubstr("cannot extract the code"));
}

TEST_F(SnippetTest, SetupRunsOnceInTheWorkdirAndIsCachedAfter) {
  spit(root_ / "src/req.txt", "numpy\n");
  pack();
  with_setup("echo ran >>setup-runs.txt; mkdir -p .venv; echo installing");
  const std::string script = std::string(code_extract_snippet()) + setup_snippet(false);
  EXPECT_EQ(run(script), std::vector<int>{0}) << out();
  EXPECT_THAT(out(), HasSubstr("[setup] installing"));
  EXPECT_EQ(run(script), std::vector<int>{0}) << out();
  EXPECT_THAT(out(), HasSubstr("[setup] cached"));
  EXPECT_EQ(count_lines(fs::path(request_.workdir) / "setup-runs.txt"), 1);
  EXPECT_TRUE(fs::is_directory(fs::path(request_.workdir) / ".venv"));
  EXPECT_TRUE(fs::exists(fs::path(request_.setup_dir) / "done"));
}

TEST_F(SnippetTest, TwoJobsAtOnceRunTheSameSetupOnceUnderItsLock) {
  spit(root_ / "src/a", "a\n");
  pack();
  with_setup("echo ran >>setup-runs.txt; sleep 0.3");
  const std::string script = std::string(code_extract_snippet()) + setup_snippet(false);
  EXPECT_EQ(run(script, 3), std::vector<int>(3, 0)) << out(0) << out(1) << out(2);
  EXPECT_EQ(count_lines(fs::path(request_.workdir) / "setup-runs.txt"), 1);
}

TEST_F(SnippetTest, PerNodeSetupKeepsAMarkerPerHost) {
  spit(root_ / "src/a", "a\n");
  pack();
  with_setup("true");
  request_.setup_per_node = true;
  const std::string script = std::string(code_extract_snippet()) + setup_snippet(true);
  EXPECT_EQ(run(script), std::vector<int>{0}) << out();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_TRUE(fs::exists(fs::path(request_.setup_dir) / (std::string("done.") + host)));
  EXPECT_FALSE(fs::exists(fs::path(request_.setup_dir) / "done"));
}

TEST_F(SnippetTest, AFailedSetupLeavesItsMarkerAndIsNotCached) {
  spit(root_ / "src/a", "a\n");
  pack();
  with_setup("echo Collecting torch; echo 'ERROR: no network' >&2; exit 3");
  const std::string script = std::string(code_extract_snippet()) + setup_snippet(false);
  EXPECT_EQ(run(script), std::vector<int>{kSetupFailedExit});
  EXPECT_THAT(out(), HasSubstr("[setup] ERROR: no network"));
  EXPECT_THAT(out(), HasSubstr("[setup] failed with exit 3"));
  const std::string marker = slurp(root_ / "run/setup_failed");
  EXPECT_THAT(marker, HasSubstr("exit 3\n"));
  EXPECT_THAT(marker, HasSubstr("ERROR: no network"));
  EXPECT_EQ(setup_failed_exit(marker).exit_code, 3);
  EXPECT_FALSE(fs::exists(fs::path(request_.setup_dir) / "done"));
  // Another task of the same attempt does not run it again.
  EXPECT_EQ(run(script), std::vector<int>{kSetupFailedExit});
  EXPECT_THAT(out(), HasSubstr("failed on another task"));
}

}  // namespace
}  // namespace orch
