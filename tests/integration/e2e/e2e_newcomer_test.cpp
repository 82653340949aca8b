// Issue 42's acceptance: a newcomer's script. Only the `orchestrate` CLI, as a person would type
// it after the README, with HOME and the XDG directories in a fresh temp dir: `serve` (two local
// sites) records its URL in the user's config, and every later command finds the server with
// no --server: a submit with -e whose job prints the variable, a submit --follow, and a sweep
// cancelled in one `job cancel --group`.
#include <gmock/gmock.h>
#include <sys/stat.h>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

class NewcomerTest : public E2eTest {
 protected:
  void SetUp() override {
    home_ = std::make_unique<TempDir>();
    // The person's environment: their own home, nothing that names a server.
    set_env("HOME", home_->path());
    set_env("XDG_CONFIG_HOME", home_->path() + "/.config");
    set_env("XDG_CACHE_HOME", home_->path() + "/.cache");
    for (const char* name :
         {"ORCH_URL", "ORCH_CA", "ORCH_TOKEN", "ORCH_TOKEN_FILE", "ORCH_STATE"}) {
      set_env(name, std::nullopt);
    }
    record_url_ = true;  // as a person's serve does (the fixture's servers run with --no-record)
    E2eTest::SetUp();    // `orchestrate serve --config C --state S --port 0`
    // As the README says: export ORCH_STATE, so the CLI sends the server's first admin token.
    set_env("ORCH_STATE", state_);
  }
  void TearDown() override {
    E2eTest::TearDown();
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }
  void set_env(const std::string& name, const std::optional<std::string>& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  // `orchestrate ARGS...` with no --server and no --state.
  static ProcessResult orchestrate(std::vector<std::string> args) {
    args.insert(args.begin(), ORCH_BIN_DIR "/orchestrate");
    return run_process(args, milliseconds(90000));
  }
  // The ids a submit printed: every line of its output that is a number.
  static std::vector<std::string> ids(const ProcessResult& r) {
    std::vector<std::string> out;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) {
        out.push_back(line);
      }
    }
    return out;
  }
  std::string spec(const std::string& name, const std::string& yaml) {
    const std::string path = dir_->path() + "/" + name + ".yaml";
    write_file(path, yaml);
    return path;
  }

  std::unique_ptr<TempDir> home_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(NewcomerTest, ServeSubmitWithEnvFollowAndCancelASweepWithoutServer) {
  // serve recorded where it listens, in a file of the user's alone.
  const std::string config = home_->path() + "/.config/orchestrate/config.json";
  struct stat st {};
  ASSERT_EQ(::stat(config.c_str(), &st), 0) << "serve did not record its URL in " << config;
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THAT(read_file(config), HasSubstr("\"server_url\": \"" + url_ + "\""));
  ProcessResult clusters = orchestrate({"cluster", "list"});
  ASSERT_EQ(clusters.exit_code, 0) << clusters.output;
  EXPECT_THAT(clusters.output, HasSubstr("alpha"));

  // -e: the job sees the variable, and its log says so.
  const std::string env_spec = spec("hello",
                                    "name: hello\ncommand: echo \"greeting is $GREETING\"\n"
                                    "resources: {nodes: 1, gpus_per_node: 1}\n");
  ProcessResult hello = orchestrate({"job", "submit", env_spec, "-e", "GREETING=hi-newcomer"});
  ASSERT_EQ(hello.exit_code, 0) << hello.output;
  ASSERT_EQ(ids(hello).size(), 1u) << hello.output;
  ProcessResult log = orchestrate({"job", "logs", ids(hello)[0], "--follow"});
  EXPECT_EQ(log.exit_code, 0) << log.output;
  EXPECT_THAT(log.output, HasSubstr("greeting is hi-newcomer"));

  // --follow: events and log until the job ends; exit 0 because it succeeded.
  ProcessResult followed = orchestrate(
      {"job", "submit", spec("toy", job_yaml("follow-me", "--steps 20 --step-delay-ms 10")),
       "--follow"});
  EXPECT_EQ(followed.exit_code, 0) << followed.output;
  EXPECT_THAT(followed.output, HasSubstr("succeeded"));

  // A sweep of three long runs, cancelled as one group.
  const std::string sweep =
      spec("sweep", "name: newcomer-sweep\ncommand: " + testkit::job_bin_dir() +
                        "/toy_trainer --dim 32 --batch 16 --steps 100000 --step-delay-ms 20 "
                        "--ckpt-dir \"$ORCH_CHECKPOINT_DIR\"\n"
                        "resources: {nodes: 1, gpus_per_node: 1}\nmodel: {parameters: 1024}\n"
                        "checkpoint: {interval_steps: 10}\n"
                        "sweep:\n  env:\n    LR: [\"0.1\", \"0.2\", \"0.3\"]\n");
  ProcessResult submitted = orchestrate({"job", "submit", sweep});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::vector<std::string> points = ids(submitted);
  ASSERT_EQ(points.size(), 3u) << submitted.output;
  ProcessResult cancelled = orchestrate({"job", "cancel", "--group", "newcomer-sweep"});
  EXPECT_EQ(cancelled.exit_code, 0) << cancelled.output;
  for (const std::string& id : points) {
    EXPECT_THAT(cancelled.output, HasSubstr("cancel requested for job " + id)) << id;
  }
  std::string last;
  const bool all_cancelled = eventually(
      [&] {
        ProcessResult list =
            orchestrate({"-o", "json", "job", "list", "--group", "newcomer-sweep"});
        json body = json::parse(list.output, nullptr, false);
        last = list.output;
        if (!body.is_object() || !body["jobs"].is_array() || body["jobs"].size() != 3) return false;
        for (const auto& j : body["jobs"]) {
          if (j["state"] != "cancelled") return false;
        }
        return true;
      },
      milliseconds(60000));
  EXPECT_TRUE(all_cancelled) << last;
}

}  // namespace
}  // namespace orch::e2e
