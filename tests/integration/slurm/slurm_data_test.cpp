// Issue 5's acceptance on real Slurm: checkpoints verified at alpha and replicated to beta with
// real rsync (beta's login node pulls from alpha's), a lost checkpoint directory plus a dead
// node resumed on beta from the replica, a corrupt newest checkpoint never resumed from, and a
// transfer throttled by the MFU of the job beside it. Each site has its own storage root.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "slurm_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;

class SlurmDataTest : public SlurmE2eTest {
 protected:
  // Each login node can reach the other's (the lab's one key and known_hosts), so copies run
  // on the destination's login node, pulling.
  std::string cluster_extra(const std::string& name) const override {
    const std::string peer = name == "alpha" ? "beta" : "alpha";
    const test::LabCluster& p = lab_->cluster(peer);
    return "    data:\n"
           "      audit_interval_s: " +
           audit_interval_s() +
           "\n"
           "      bwlimit_mb_s: " +
           bwlimit(name) +
           "\n"
           "      throttle: {interval_s: 1, min_mb_s: 1}\n"
           "      pull_from:\n"
           "        " +
           peer + ": {host: " + p.host + ", port: " + std::to_string(p.ssh_port) +
           ", user: " + p.user + ", key_file: " + pull_key_file(name) +
           ", known_hosts: " + p.known_hosts + "}\n";
  }
  // The key the login node of cluster `name` pulls from its peer with: the lab's one key.
  virtual std::string pull_key_file(const std::string& name) const {
    return lab_->cluster(name == "alpha" ? "beta" : "alpha").key_file;
  }
  virtual std::string audit_interval_s() const { return "2"; }
  virtual std::string bwlimit(const std::string& name) const {
    (void)name;
    return "0";
  }

  json checkpoint_events(std::int64_t id, const std::string& kind) {
    json out = json::array();
    for (const auto& e : events(id)) {
      if (e["kind"] == kind) out.push_back(e);
    }
    return out;
  }

  // Deletes a folder a running job (or retention) may be writing to and pruning meanwhile: an
  // entry that vanishes between listing and removal is not a failure, so it tries again.
  static std::error_code remove_live_tree(const fs::path& dir) {
    std::error_code ec;
    for (int attempt = 0; attempt < 20; ++attempt) {
      ec.clear();
      fs::remove_all(dir, ec);
      if (!ec || ec != std::errc::no_such_file_or_directory) return ec;
    }
    return ec;
  }

  // "... at step 40 ..." -> 40
  static int step_in(const std::string& message) {
    std::smatch m;
    static const std::regex re("step ([0-9]+)");
    return std::regex_search(message, m, re) ? std::stoi(m[1]) : -1;
  }

  json wait_events(std::int64_t id, const std::string& kind, std::size_t count,
                   const std::string& what) {
    json found;
    wait_job(
        id,
        [&](const json&) {
          found = checkpoint_events(id, kind);
          return found.size() >= count;
        },
        what);
    return found;
  }

  // The job's own checkpoint directory at the cluster ($ORCH_CHECKPOINT_DIR there).
  std::string ckpt_dir(const std::string& cluster, std::int64_t job) const {
    return lab_->cluster(cluster).storage_root + "/ckpt/job-" + std::to_string(job);
  }
};

// Every checkpoint is listed and hashed at alpha (verified), copied to beta by rsync on beta's
// login node and verified there, within one checkpoint interval of being reported.
TEST_F(SlurmDataTest, CheckpointsAreVerifiedAtAlphaAndReplicatedToBetaWithinOneInterval) {
  // 10 steps x 1.2 s: a checkpoint every 12 s. Each copy takes two SSH logins (here to beta's
  // login node, there to alpha's): 1.5 s on a quiet machine, up to 9.5 s under CI's parallel
  // labs.
  const std::int64_t id = submit(job_yaml("repl", "--steps 50 --step-delay-ms 1200 --ckpt-every 10",
                                          "placement: {allowed: [alpha]}\n"));
  ASSERT_GT(id, 0);
  json replicated = wait_events(id, "checkpoint-replicated", 3, "replicate three checkpoints");
  ASSERT_FALSE(replicated.empty());
  std::map<int, std::int64_t> reported;
  for (const auto& e : checkpoint_events(id, "checkpoint")) {
    reported[step_in(e["message"])] = e["at_ms"].get<std::int64_t>();
  }
  std::map<int, std::int64_t> verified;
  for (const auto& e : checkpoint_events(id, "checkpoint-verified")) {
    if (e["message"].get<std::string>().find("at alpha") != std::string::npos) {
      verified[step_in(e["message"])] = e["at_ms"].get<std::int64_t>();
    }
  }
  const std::int64_t interval_ms = 10 * 1200;
  for (const auto& e : replicated) {
    const std::string msg = e["message"];
    EXPECT_NE(msg.find("copied to beta and verified"), std::string::npos) << msg;
    const int step = step_in(msg);
    ASSERT_TRUE(reported.count(step)) << msg;
    EXPECT_TRUE(verified.count(step)) << "not verified at alpha first: " << msg;
    const std::int64_t delay = e["at_ms"].get<std::int64_t>() - reported[step];
    std::printf("checkpoint at step %d: replicated to beta %lld ms after it was reported\n", step,
                static_cast<long long>(delay));
    EXPECT_LE(delay, interval_ms) << msg;
  }
  // The copies are real: beta holds byte-identical files in orchestrate's replica folder.
  json ckpts = get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/checkpoints");
  ASSERT_TRUE(ckpts.is_object()) << ckpts.dump();
  int on_beta = 0;
  for (const auto& c : ckpts["checkpoints"]) {
    for (const auto& r : c["replicas"]) {
      if (r["cluster"] != "beta" || r["state"] != "verified") continue;
      ++on_beta;
      const std::string copy = r["path"];
      EXPECT_EQ(copy.rfind(lab_->cluster("beta").storage_root, 0), 0u) << copy;
      std::ifstream a(c["path"].get<std::string>(), std::ios::binary);
      std::ifstream b(copy, std::ios::binary);
      std::string sa((std::istreambuf_iterator<char>(a)), {});
      std::string sb((std::istreambuf_iterator<char>(b)), {});
      // Retention may have deleted older ones meanwhile; compare the ones still there.
      if (!sa.empty() && !sb.empty()) {
        EXPECT_EQ(sa, sb) << copy;
      }
    }
  }
  EXPECT_GE(on_beta, 1) << ckpts.dump(1);
  json j = wait_final(id);
  EXPECT_EQ(j["state"], "succeeded") << describe_job(url_, id);
}

// The provider deletes alpha's checkpoints, then alpha's node dies: the job resumes on beta from
// beta's replica, no older than the newest checkpoint replicated before the loss.
TEST_F(SlurmDataTest, LostCheckpointsAndADeadNodeResumeOnBetaFromTheReplica) {
  const std::int64_t id = submit(job_yaml("lost", "--steps 400 --step-delay-ms 100 --ckpt-every 10",
                                          "placement: {preferred: [alpha]}\n"));
  ASSERT_GT(id, 0);
  json replicated = wait_events(id, "checkpoint-replicated", 3, "replicate three checkpoints");
  ASSERT_FALSE(replicated.empty());
  int newest_replicated = 0;
  for (const auto& e : checkpoint_events(id, "checkpoint-replicated")) {
    newest_replicated = std::max(newest_replicated, step_in(e["message"]));
  }
  const std::error_code ec = remove_live_tree(ckpt_dir("alpha", id));
  ASSERT_FALSE(ec) << ec.message();
  const std::string node = lab_->cluster("alpha").nodes.at(0);
  ASSERT_TRUE(lab_->kill_node("alpha", node).ok());

  json resumed = wait_running_on(id, "beta", 1);
  ASSERT_FALSE(resumed.is_null());
  json list = attempts(id);
  ASSERT_GE(list.size(), 2u) << describe_job(url_, id);
  const json& on_beta = list.back();
  EXPECT_EQ(on_beta["cluster"], "beta");
  ASSERT_FALSE(on_beta["resumed_from"].is_null()) << describe_job(url_, id);
  EXPECT_GE(on_beta["resumed_from"]["step"].get<int>(), newest_replicated)
      << describe_job(url_, id);
  const std::string from = on_beta["resumed_from"]["path"];
  EXPECT_EQ(from.rfind(lab_->cluster("beta").storage_root, 0), 0u)
      << "resumed from a path that is not beta's own copy: " << from;

  // The loss was noticed (audit or the failed copy) and said so.
  wait_events(id, "checkpoint-lost", 1, "report the lost copies at alpha");
  json j = wait_final(id);
  EXPECT_EQ(j["state"], "succeeded") << describe_job(url_, id);
  EXPECT_EQ(j["step"], 400);
}

// One byte of the newest checkpoint changes while the job hangs; the check before the next
// launch finds it (no audit runs here, so that check is what must notice), resumes from the
// previous one, and says why.
class SlurmNoAuditTest : public SlurmDataTest {
 protected:
  std::string audit_interval_s() const override { return "0"; }
};

TEST_F(SlurmNoAuditTest, ACorruptNewestCheckpointIsNeverResumedFrom) {
  const std::int64_t id = submit(
      job_yaml("corrupt",
               "--steps 40 --step-delay-ms 50 --ckpt-every 10 --hang-at-step 25 --fault-attempt 1",
               "placement: {allowed: [alpha]}\n"
               "health: {hang_after_s: 4}\n",
               "{interval_steps: 10, replicate: {copies: 1}}"));
  ASSERT_GT(id, 0);
  // Both checkpoints verified at alpha before the hang is found.
  wait_job(
      id,
      [&](const json&) {
        int verified = 0;
        for (const auto& e : checkpoint_events(id, "checkpoint-verified")) {
          verified += step_in(e["message"]) == 20 ? 1 : 0;
        }
        return verified > 0;
      },
      "verify the checkpoint at step 20");
  const std::string newest = ckpt_dir("alpha", id) + "/step-20.ckpt";
  {
    std::fstream f(newest, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.is_open()) << newest;
    f.seekg(40);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(40);
    f.write(&c, 1);
  }
  json j = wait_final(id);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["state"], "succeeded") << describe_job(url_, id);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 2u) << describe_job(url_, id);
  EXPECT_EQ(list[0]["cause"], "hang");
  ASSERT_FALSE(list[1]["resumed_from"].is_null()) << describe_job(url_, id);
  EXPECT_EQ(list[1]["resumed_from"]["step"], 10) << describe_job(url_, id);
  json checked = checkpoint_events(id, "resume-checked");
  ASSERT_EQ(checked.size(), 1u) << describe_job(url_, id);
  const std::string msg = checked[0]["message"];
  EXPECT_NE(msg.find("from step 10"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not from step 20"), std::string::npos) << msg;
  EXPECT_NE(msg.find("SHA-256"), std::string::npos) << msg;
}

// A transfer into beta while a job trains there: the job's throughput drops while a flag file
// exists (a stand-in for a filesystem the copy saturates); the cap is cut, and raised back to
// the configured 20 MB/s once the job recovers. The job's events show each change.
// Issue 15: the newest checkpoints at alpha are deleted and alpha's node dies; the job resumes
// on alpha's other node, and rather than redo dozens of steps from the older copy left there,
// it waits for the newest one verified at beta to be copied back (the launch's own check finds
// alpha's newest missing: no audit runs here), and resumes from it.
class SlurmResumeWeighingTest : public SlurmNoAuditTest {
 protected:
  int nodes_per_cluster() const override { return 2; }
};

TEST_F(SlurmResumeWeighingTest, DeletedNewestCopiesAndADeadNodeResumeFromTheNewerCopyBroughtBack) {
  const std::int64_t id =
      submit(job_yaml("weigh", "--steps 3000 --step-delay-ms 100 --ckpt-every 10",
                      "placement: {allowed: [alpha]}\n",
                      "{interval_steps: 10, replicate: {copies: 2, keep: 1000}}"));
  ASSERT_GT(id, 0);
  wait_events(id, "checkpoint-replicated", 8, "replicate eight checkpoints");
  json first = attempts(id).at(0);
  ASSERT_FALSE(first["nodes"].empty());
  ASSERT_TRUE(lab_->kill_node("alpha", first["nodes"][0]).ok());
  int newest_replicated = 0;
  for (const auto& e : checkpoint_events(id, "checkpoint-replicated")) {
    newest_replicated = std::max(newest_replicated, step_in(e["message"]));
  }
  // The provider loses alpha's newest copies: everything within 60 steps of what beta holds.
  int deleted = 0;
  int kept = 0;
  for (const auto& f : fs::directory_iterator(ckpt_dir("alpha", id))) {
    const int step = step_in(
        std::regex_replace(f.path().filename().string(), std::regex("step-([0-9]+).*"), "step $1"));
    if (step < 0) continue;
    if (step > newest_replicated - 60) {
      const std::error_code ec = remove_live_tree(f.path());
      ASSERT_FALSE(ec) << f.path() << ": " << ec.message();
      ++deleted;
    } else {
      kept = std::max(kept, step);
    }
  }
  ASSERT_GE(deleted, 6);
  ASSERT_GT(kept, 0);

  json resumed = wait_job(
      id,
      [&](const json& j) {
        json list = attempts(id);
        return j["state"] == "running" && list.size() >= 2 && list.back()["state"] == "running" &&
               !list.back()["resumed_from"].is_null();
      },
      "resume on alpha");
  ASSERT_FALSE(resumed.is_null());
  const json last = attempts(id).back();
  EXPECT_EQ(last["cluster"], "alpha");
  EXPECT_GE(last["resumed_from"]["step"].get<int>(), newest_replicated)
      << "resumed from an older copy (alpha kept up to step " << kept << ")\n"
      << describe_job(url_, id);
  const json weighed = checkpoint_events(id, "resume-weighed");
  ASSERT_FALSE(weighed.empty()) << describe_job(url_, id);
  EXPECT_NE(weighed.back()["message"].get<std::string>().find("waiting for step"),
            std::string::npos)
      << weighed.dump(1);
  std::cerr << "alpha kept up to step " << kept << ", beta held step " << newest_replicated
            << "; resumed from step " << last["resumed_from"]["step"] << "\n"
            << checkpoint_events(id, "resume-bounced").dump(1) << "\n"
            << weighed.dump(1) << "\n";
  call(url_, "POST", "/api/v1/jobs/" + std::to_string(id) + "/cancel");
}

// A lock the test holds (flock, exclusive) and a lab key whose every login runs its command only
// under that lock, shared: its authorized_keys entry forces `flock --shared <lock> sh -c
// "$SSH_ORIGINAL_COMMAND"`. A copy pulled with that key is running (its rsync has started and
// waits for the source's rsync to answer) and moves no byte until the test opens the gate;
// rsync restarted for a new cap waits the same way. Opening it lets every waiting login through.
class SourceGate {
 public:
  SourceGate(const SourceGate&) = delete;
  SourceGate& operator=(const SourceGate&) = delete;
  ~SourceGate() {
    open();
    if (fd_ >= 0) ::close(fd_);
  }

  // Closed: the key is made and authorized at the lab (its authorized_keys is re-read at each
  // login), the lock taken. Errors: a message saying which step failed.
  static Result<std::unique_ptr<SourceGate>> closed(const test::SlurmLab& lab) {
    auto gate = std::unique_ptr<SourceGate>(new SourceGate(lab.dir() + "/source-gate"));
    const std::string& d = gate->dir_;
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) return make_error(ErrorKind::io, "cannot make " + d + ": " + ec.message());
    gate->fd_ = ::open((d + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (gate->fd_ < 0 || ::flock(gate->fd_, LOCK_EX) != 0) {
      return make_error(ErrorKind::io, "cannot lock " + d + "/lock");
    }
    gate->locked_ = true;
    const test::LabCommand keygen = test::run_lab_command(
        {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "orch-lab-gated", "-f", gate->key()});
    if (keygen.exit_code != 0) return make_error(ErrorKind::io, "ssh-keygen: " + keygen.err);
    std::ifstream pub(gate->key() + ".pub");
    std::string public_key;
    if (!std::getline(pub, public_key)) return make_error(ErrorKind::io, "no " + gate->key());
    std::ofstream keys(lab.dir() + "/ssh/authorized_keys", std::ios::app);
    keys << "restrict,command=\"flock --shared " << d
         << "/lock sh -c \\\"$SSH_ORIGINAL_COMMAND\\\"\" " << public_key << "\n";
    if (!keys.flush()) return make_error(ErrorKind::io, "cannot authorize the gated key");
    return gate;
  }

  std::string key() const { return dir_ + "/id_ed25519"; }
  void open() {
    if (locked_ && fd_ >= 0) ::flock(fd_, LOCK_UN);
    locked_ = false;
  }

 private:
  explicit SourceGate(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  int fd_ = -1;
  bool locked_ = false;
};

class SlurmThrottleTest : public SlurmDataTest {
 protected:
  std::string bwlimit(const std::string& name) const override {
    return name == "beta" ? "20" : "0";
  }
  // Beta pulls alpha's data through the gate.
  void before_start() override {
    auto gate = SourceGate::closed(*lab_);
    ASSERT_TRUE(gate.ok()) << gate.error().message;
    gate_ = std::move(*gate);
  }
  std::string pull_key_file(const std::string& name) const override {
    return name == "beta" ? gate_->key() : SlurmDataTest::pull_key_file(name);
  }
  void before_cleanup() override {
    gate_.reset();
    SlurmDataTest::before_cleanup();
  }

  std::unique_ptr<SourceGate> gate_;
};

// The copy to beta is held open by the gate for as long as the test watches the cap, so the
// cap's cut and its climb back to beta's 20 MB/s happen while it runs, however fast or slow the
// machine is; then it is let through and ends verified.
TEST_F(SlurmThrottleTest, AnMfuDropBesideATransferCutsTheCapAndRecoveryRestoresIt) {
  const std::string flag = dir_->path() + "/contention";
  const std::string script =
      "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); t=0.1; [ -e " + flag +
      " ] && t=0.2; sleep 0.05; echo \"@orchestrate {\\\"event\\\":\\\"progress\\\","
      "\\\"step\\\":$i,\\\"tokens\\\":1000,\\\"step_time_s\\\":$t}\"; done";
  const std::int64_t job = submit("name: trainer\ncommand: '" + script +
                                  "'\nresources: {nodes: 1, gpus_per_node: 2}\n"
                                  "model: {flops_per_token: 1.0e5}\n"
                                  "placement: {allowed: [beta]}\n");
  ASSERT_GT(job, 0);
  ASSERT_FALSE(wait_running_on(job, "beta", 40).is_null());

  // 40 MB at alpha, registered, verified, then copied to beta at <= 20 MB/s once let through.
  const std::string ds = lab_->cluster("alpha").storage_root + "/ds";
  fs::create_directories(ds);
  constexpr int kMegabytes = 40;
  {
    std::ofstream out(ds + "/shard-0.bin", std::ios::binary);
    std::string block(1 << 20, '\0');
    for (int i = 0; i < kMegabytes; ++i) {
      for (std::size_t k = 0; k < block.size(); k += 4096) block[k] = static_cast<char>(i + k);
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
  }
  HttpResponse add =
      call(url_, "POST", "/api/v1/data/datasets",
           json{{"name", "ds"}, {"cluster", "alpha"}, {"path", ds}}.dump(), "application/json");
  ASSERT_EQ(add.status, 201) << add.body;
  json transfer;
  auto deadline = SteadyClock::now() + milliseconds(60000);
  while (SteadyClock::now() < deadline) {
    HttpResponse r = call(url_, "POST", "/api/v1/data/replicate",
                          json{{"dataset", "ds"}, {"to", "beta"}}.dump(), "application/json");
    json body = json::parse(r.body, nullptr, false);
    if (r.status == 202 && body.is_object() && body["transfer"].is_number()) {
      transfer = body;
      break;
    }
    std::this_thread::sleep_for(milliseconds(200));  // not verified at alpha yet
  }
  ASSERT_FALSE(transfer.is_null()) << "the dataset was never verified at alpha";
  const std::string tpath =
      "/api/v1/data/transfers/" + std::to_string(transfer["transfer"].get<int>());
  auto wait_transfer = [&](const std::function<bool(const json&)>& done, const std::string& what) {
    const auto until = SteadyClock::now() + milliseconds(60000);
    json t;
    while (SteadyClock::now() < until) {
      t = get_json(url_, tpath);
      if (t.is_object() && done(t)) return t;
      std::this_thread::sleep_for(milliseconds(100));
    }
    ADD_FAILURE() << "timed out waiting for the transfer to " << what << ": " << t.dump(1)
                  << describe_job(url_, job);
    return json();
  };
  auto cap = [](const json& t) {
    return t["cap_mb_s"].is_number() ? t["cap_mb_s"].get<double>() : -1;
  };
  ASSERT_FALSE(
      wait_transfer([](const json& t) { return t["state"] == "running"; }, "run").is_null());

  std::ofstream(flag).put('1');  // the job slows down
  json cut = wait_transfer([&](const json& t) { return cap(t) >= 0 && cap(t) < 20; }, "be cut");
  ASSERT_FALSE(cut.is_null());
  EXPECT_EQ(cut["state"], "running") << cut.dump(1);
  fs::remove(flag);  // the job recovers
  json restored = wait_transfer([&](const json& t) { return cap(t) >= 20 - 1e-9; }, "be restored");
  ASSERT_FALSE(restored.is_null());
  EXPECT_EQ(restored["state"], "running") << restored.dump(1);
  EXPECT_EQ(restored["bytes_done"], 0) << "the gate let bytes through: " << restored.dump(1);

  // The job is told of each change just after the cap is written: the raise to 20 comes last.
  json raises;
  EXPECT_TRUE(eventually([&] {
    raises = checkpoint_events(job, "transfer-unthrottled");
    return !raises.empty() && raises.back()["message"].get<std::string>().ends_with("-> 20.0 MB/s");
  })) << raises.dump(1);
  json cuts = checkpoint_events(job, "transfer-throttled");
  ASSERT_GE(cuts.size(), 1u) << describe_job(url_, job);
  EXPECT_NE(cuts[0]["message"].get<std::string>().find("below its baseline"), std::string::npos)
      << cuts[0].dump();
  EXPECT_NE(cuts[0]["message"].get<std::string>().find("cap 20.0 -> 10.0 MB/s"), std::string::npos)
      << cuts[0].dump();
  for (const auto& e : cuts) std::printf("%s\n", e["message"].get<std::string>().c_str());
  for (const auto& e : raises) std::printf("%s\n", e["message"].get<std::string>().c_str());

  gate_->open();  // the copy runs at the restored cap to its end and is verified at beta
  json done = wait_transfer(
      [](const json& t) { return t["state"] == "done" || t["state"] == "failed"; }, "end");
  ASSERT_FALSE(done.is_null());
  EXPECT_EQ(done["state"], "done") << done.dump(1);
  std::error_code ec;
  EXPECT_EQ(fs::file_size(done["to"]["path"].get<std::string>() + "/shard-0.bin", ec),
            std::uintmax_t{kMegabytes} << 20)
      << ec.message() << "\n"
      << done.dump(1);
  call(url_, "POST", "/api/v1/jobs/" + std::to_string(job) + "/cancel");
}

}  // namespace
}  // namespace orch::e2e
