// Issue 37 on the real server: a job's output cannot make the server list, copy or delete
// another user's checkpoints. User A's job saves real checkpoints in its own directory; user B's
// job reports A's directory as its own checkpoint, A's file, a path into A's directory through
// "..", and a symbolic link it made in its own directory that leads to A's; B's retention keeps
// one checkpoint. A's files are all still there, B got a `bad-progress-line` event for each,
// and B's registered checkpoints hold none of them (the link is refused, never listed or
// deleted), while B's own old checkpoints are deleted as retention says.
#include <filesystem>
#include <map>
#include <string>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;

class CheckpointConfinementE2eTest : public E2eTest {
 protected:
  // A token of role user, made by the admin.
  std::string user_token(const std::string& name, const std::string& team) {
    HttpResponse r = call(url_, "POST", "/api/v1/tokens",
                          json{{"name", name}, {"role", "user"}, {"teams", {team}}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    json j = json::parse(r.body, nullptr, false);
    return j.is_object() ? j.value("token", "") : "";
  }
  std::int64_t submit_as(const std::string& token, const std::string& yaml) {
    HttpResponse r = call_as(url_, token, "POST", "/api/v1/jobs", yaml, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.body << "\nspec:\n" << yaml;
    json j = json::parse(r.body, nullptr, false);
    return j.is_object() && j["id"].is_number_integer() ? j["id"].get<std::int64_t>() : 0;
  }
  json checkpoints(std::int64_t id) {
    json c = get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/checkpoints");
    return c.is_object() ? c["checkpoints"] : json::array();
  }
  std::vector<std::string> event_messages(std::int64_t id, const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& e : events(id)) {
      if (e.value("kind", "") == kind) out.push_back(e.value("message", ""));
    }
    return out;
  }
  // Every regular file under dir with its bytes.
  static std::map<std::string, std::string> files_under(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file()) out[e.path().string()] = read_file(e.path().string());
    }
    return out;
  }
  bool named_in(const std::vector<std::string>& messages, const std::string& path) {
    for (const auto& m : messages) {
      if (m.find(path) != std::string::npos) return true;
    }
    return false;
  }
};

// B's job: four lines that lead out of its directory, each in an output read of its own, then
// three real checkpoints of its own (retention keeps the newest), then it waits a little for
// the site to list them.
std::string attacker_yaml(const std::string& victim_dir, const std::string& victim_file,
                          std::int64_t victim_id) {
  const std::string up = "$ORCH_CHECKPOINT_DIR/../job-" + std::to_string(victim_id);
  auto line = [](int step, const std::string& path) {
    return "  echo '@orchestrate {\"event\":\"checkpoint\",\"step\":" + std::to_string(step) +
           ",\"path\":\"'\"" + path + "\"'\"}'; sleep 0.3\n";
  };
  return "name: b\n"
         "command: |\n"
         "  set -e\n"
         "  ln -s '" +
         victim_dir + "' \"$ORCH_CHECKPOINT_DIR/step-4\"\n" + line(1, victim_dir) +
         line(2, victim_file) + line(3, up) + line(4, "$ORCH_CHECKPOINT_DIR/step-4") +
         "  for s in 5 6 7; do\n"
         "    printf 'b%s' $s > \"$ORCH_CHECKPOINT_DIR/step-$s.ckpt\"\n"
         "    echo '@orchestrate {\"event\":\"checkpoint\",\"step\":'$s',\"path\":\"'\"$ORCH_"
         "CHECKPOINT_DIR/step-$s.ckpt\"'\"}'; sleep 0.3\n"
         "  done\n"
         "  sleep 3\n"
         "resources: {nodes: 1, gpus_per_node: 1}\n"
         "checkpoint: {replicate: {keep: 1, copies: 1}}\n"
         "placement: {allowed: [alpha]}\n";
}

// A: the toy trainer on alpha, every checkpoint kept (no retention, no pruning).
std::string victim_yaml() {
  return "name: a\ncommand: " + testkit::job_bin_dir() +
         "/toy_trainer --dim 32 --batch 16 --steps 30 --step-delay-ms 10 --ckpt-every 10 "
         "--keep-ckpts 0 --ckpt-dir \"$ORCH_CHECKPOINT_DIR\"\n"
         "resources: {nodes: 1, gpus_per_node: 2}\n"
         "model: {parameters: 1024}\n"
         "checkpoint: {interval_steps: 10, replicate: {enabled: false}}\n"
         "placement: {allowed: [alpha]}\n";
}

TEST_F(CheckpointConfinementE2eTest, AJobsOutputCannotMakeTheServerTouchAnotherUsersCheckpoints) {
  const std::string alice = user_token("alice", "vision");
  const std::string bob = user_token("bob", "nlp");
  ASSERT_FALSE(alice.empty());
  ASSERT_FALSE(bob.empty());

  // A: real checkpoints at steps 10, 20 and 30 in its own directory, none pruned.
  const std::int64_t a = submit_as(alice, victim_yaml());
  ASSERT_GT(a, 0);
  ASSERT_FALSE(succeeded_attempts(a).is_null());
  ASSERT_TRUE(eventually([&] {
    json c = checkpoints(a);
    if (c.size() < 3) return false;
    for (const auto& one : c) {
      if (one["verified"] != true) return false;
    }
    return true;
  })) << checkpoints(a).dump();
  const std::string a_file = checkpoints(a)[0]["path"].get<std::string>();
  const std::string a_dir = fs::path(a_file).parent_path().string();
  ASSERT_EQ(fs::path(a_dir).filename().string(), "job-" + std::to_string(a));
  const auto a_files = files_under(a_dir);
  ASSERT_GE(a_files.size(), 3u);

  // B names A's directory, A's file, A's directory through "..", and a link to it.
  const std::int64_t b = submit_as(bob, attacker_yaml(a_dir, a_file, a));
  ASSERT_GT(b, 0);
  ASSERT_FALSE(succeeded_attempts(b).is_null());
  const std::string b_dir = fs::path(a_dir).parent_path().string() + "/job-" + std::to_string(b);
  // Retention ran for B: its own step 5 and 6 are deleted once step 7 is verified.
  ASSERT_TRUE(eventually([&] {
    return !fs::exists(b_dir + "/step-5.ckpt") && !fs::exists(b_dir + "/step-6.ckpt");
  })) << checkpoints(b).dump()
      << describe_job(url_, b);
  EXPECT_TRUE(fs::exists(b_dir + "/step-7.ckpt"));

  // A's files, all there and unchanged.
  EXPECT_EQ(files_under(a_dir), a_files);
  // B was told why for each line.
  const auto bad = event_messages(b, "bad-progress-line");
  EXPECT_TRUE(named_in(bad, a_dir)) << ::testing::PrintToString(bad);
  EXPECT_TRUE(named_in(bad, a_file)) << ::testing::PrintToString(bad);
  EXPECT_TRUE(named_in(bad, b_dir + "/../job-" + std::to_string(a)))
      << ::testing::PrintToString(bad);
  EXPECT_TRUE(named_in(bad, "step 4 of job " + std::to_string(b))) << ::testing::PrintToString(bad);
  // B's registered checkpoints: none of A's paths; the link is there only as refused.
  for (const auto& c : checkpoints(b)) {
    const std::string path = c["path"].get<std::string>();
    EXPECT_EQ(path.find(a_dir), std::string::npos) << c.dump();
    EXPECT_EQ(path.rfind(b_dir + "/", 0), 0u) << c.dump();
    if (path == b_dir + "/step-4") {
      EXPECT_EQ(c["verified"], false) << c.dump();
      for (const auto& r : c["replicas"]) EXPECT_EQ(r["state"], "refused") << c.dump();
    }
  }
  EXPECT_TRUE(fs::is_symlink(b_dir + "/step-4")) << "refused: never deleted either";
  EXPECT_EQ(files_under(a_dir), a_files);
}

}  // namespace
}  // namespace orch::e2e
