// The Slurm lab itself (tests/lab/slurm, driven through testkit/slurm_lab.h): real
// clusters come up on their own ports, run GPU jobs, and show the faults other tests inject the
// way a rented cluster would. Each test brings up its own lab, so ctest may run them in parallel.

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testkit/slurm_lab.h"

namespace orch::test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;
using ::testing::Not;

std::unique_ptr<SlurmLab> start_lab(std::vector<std::string> names, int nodes = 1) {
  auto lab = SlurmLab::start(std::move(names), nodes);
  if (!lab) {
    ADD_FAILURE() << lab.error().message;
    return nullptr;
  }
  return std::move(lab).value();
}

// Polls `done` every `every` until it holds or `limit` passed; whether it held.
bool eventually(std::chrono::milliseconds limit, const std::function<bool()>& done,
                std::chrono::milliseconds every = milliseconds(250)) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}

// The value of Key= in `scontrol show job -o ID`, or "" when unknown.
std::string job_field(const SlurmLab& lab, const std::string& cluster, const std::string& id,
                      const std::string& key) {
  auto out = lab.slurm(cluster, {"scontrol", "show", "job", "-o", id});
  if (!out) return "";
  std::stringstream ss(*out);
  for (std::string word; ss >> word;) {
    if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
  }
  return "";
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Live processes whose working directory is under `dir` or whose environment names the lab.
std::vector<std::string> lab_processes(const std::string& dir) {
  std::vector<std::string> found;
  DIR* proc = opendir("/proc");
  if (!proc) return found;
  while (dirent* e = readdir(proc)) {
    std::string pid = e->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = read_text("/proc/" + pid + "/stat");
    auto paren = stat.rfind(") ");
    if (paren == std::string::npos || stat[paren + 2] == 'Z') continue;
    char cwd[4096];
    ssize_t n = readlink(("/proc/" + pid + "/cwd").c_str(), cwd, sizeof cwd - 1);
    std::string where = n > 0 ? std::string(cwd, static_cast<std::size_t>(n)) : "";
    std::string env = read_text("/proc/" + pid + "/environ");
    if (where.rfind(dir + "/", 0) == 0 ||
        env.find(std::string("ORCH_LAB_DIR=") + dir + '\0') != std::string::npos) {
      found.push_back(pid + " " + stat.substr(0, paren + 1));
    }
  }
  closedir(proc);
  return found;
}

TEST(slurm_lab, TwoClustersAnswerOnTheirOwnLoginNodes) {
  auto lab = start_lab({"alpha", "beta"});
  ASSERT_TRUE(lab);
  const LabCluster& alpha = lab->cluster("alpha");
  const LabCluster& beta = lab->cluster("beta");
  EXPECT_NE(alpha.ssh_port, beta.ssh_port);
  EXPECT_EQ(alpha.nodes, std::vector<std::string>{"alpha-n1"});
  EXPECT_EQ(alpha.key_file, beta.key_file);                          // one client key for the lab
  EXPECT_NE(alpha.host_key_fingerprint, beta.host_key_fingerprint);  // a host key each
  EXPECT_THAT(alpha.host_key_fingerprint, ::testing::StartsWith("SHA256:"));

  for (const LabCluster* c : {&alpha, &beta}) {
    LabCommand r = lab->ssh(c->name, "scontrol show config");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, ::testing::ContainsRegex("ClusterName += " + c->name + "\n"));
    EXPECT_THAT(r.out, ::testing::ContainsRegex("SlurmdTimeout += 4 sec"));
    EXPECT_THAT(r.out,
                ::testing::ContainsRegex("AccountingStorageType += accounting_storage/none"));
    // The same cluster without ssh.
    auto local = lab->slurm(c->name, {"sinfo", "-h", "-N", "-o", "%N %T %c %G"});
    ASSERT_TRUE(local) << local.error().message;
    EXPECT_EQ(*local, c->name + "-n1 idle 16 gpu:8\n");
  }

  // No accounting: sacct says so (the adapter must not need it).
  LabCommand sacct = lab->ssh("alpha", "sacct");
  EXPECT_NE(sacct.exit_code, 0);
  EXPECT_THAT(sacct.err, HasSubstr("accounting storage is disabled"));

  ClusterSpec spec = lab->cluster_spec("beta");
  EXPECT_EQ(spec.provider, "slurm");
  EXPECT_EQ(spec.ssh.port, beta.ssh_port);
  EXPECT_EQ(spec.ssh.known_hosts, beta.known_hosts);
  EXPECT_EQ(spec.nodes, 1);
  EXPECT_EQ(spec.gpus_per_node, 8);
  EXPECT_EQ(spec.storage_root, lab->dir() + "/beta/storage");
}

TEST(slurm_lab, GpuJobRunsToCompleted) {
  auto lab = start_lab({"alpha"});
  ASSERT_TRUE(lab);
  const std::string storage = lab->cluster("alpha").storage_root;
  LabCommand sub = lab->ssh("alpha", "sbatch --parsable --gres=gpu:2 --chdir=" + storage + " -o " +
                                         storage + "/out_%j.txt --wrap 'echo " +
                                         "$SLURM_CLUSTER_NAME $CUDA_VISIBLE_DEVICES'");
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  const std::string id = trimmed(sub.out);
  ASSERT_THAT(id, ::testing::MatchesRegex("[0-9]+"));
  std::string state;
  EXPECT_TRUE(eventually(milliseconds(30000),
                         [&] {
                           state = job_field(*lab, "alpha", id, "JobState");
                           return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED";
                         }))
      << "job " << id << " is " << state;
  EXPECT_EQ(state, "COMPLETED");
  EXPECT_EQ(job_field(*lab, "alpha", id, "ExitCode"), "0:0");
  EXPECT_EQ(read_text(storage + "/out_" + id + ".txt"), "alpha 0,1\n");
}

// A batch job submitted with neither --chdir nor --output writes slurm-<id>.out where sbatch ran:
// lab.slurm() runs its commands in the lab's directory, so a test that forgets --output leaves
// the file there (removed with the lab), not in its working directory (once the source tree).
TEST(slurm_lab, ABatchJobWithNeitherChdirNorOutputWritesIntoTheLabNotHere) {
  auto lab = start_lab({"alpha"});
  ASSERT_TRUE(lab);
  auto sub = lab->slurm("alpha", {"sbatch", "--parsable", "--wrap", "echo written"});
  ASSERT_TRUE(sub) << sub.error().message;
  const std::string id = trimmed(*sub);
  ASSERT_THAT(id, ::testing::MatchesRegex("[0-9]+"));
  const std::string out = "slurm-" + id + ".out";
  std::string state;
  EXPECT_TRUE(eventually(milliseconds(30000),
                         [&] {
                           state = job_field(*lab, "alpha", id, "JobState");
                           return state == "COMPLETED" || state == "FAILED";
                         }))
      << "job " << id << " is " << state;
  EXPECT_EQ(read_text(lab->dir() + "/" + out), "written\n");
  EXPECT_FALSE(std::filesystem::exists(out)) << std::filesystem::current_path().string();
  std::error_code ec;
  std::filesystem::remove(out, ec);  // had it been written here
}

TEST(slurm_lab, KilledNodeGoesDownAndComesBack) {
  auto lab = start_lab({"alpha"});
  ASSERT_TRUE(lab);
  auto sub = lab->slurm("alpha", {"sbatch", "--parsable", "--no-requeue", "--chdir",
                                  lab->cluster("alpha").storage_root, "--wrap", "sleep 120"});
  ASSERT_TRUE(sub) << sub.error().message;
  const std::string id = trimmed(*sub);
  ASSERT_TRUE(eventually(milliseconds(20000),
                         [&] { return job_field(*lab, "alpha", id, "JobState") == "RUNNING"; }));

  const auto killed = Clock::now();
  ASSERT_TRUE(lab->kill_node("alpha", "alpha-n1")) << "kill_node";
  std::string state;
  double not_responding_s = -1;
  EXPECT_TRUE(eventually(milliseconds(30000),
                         [&] {
                           auto s = lab->node_state("alpha", "alpha-n1");
                           state = s ? *s : s.error().message;
                           if (not_responding_s < 0 &&
                               state.find("NOT_RESPONDING") != std::string::npos) {
                             not_responding_s = seconds_since(killed);
                           }
                           return state.rfind("DOWN", 0) == 0;
                         }))
      << "node state " << state;
  const double down_s = seconds_since(killed);
  std::cout << "[ lab      ] alpha-n1 killed: NOT_RESPONDING after " << not_responding_s << " s, "
            << state << " after " << down_s << " s\n";
  EXPECT_THAT(state, HasSubstr("NOT_RESPONDING"));
  EXPECT_TRUE(eventually(milliseconds(5000), [&] {
    return job_field(*lab, "alpha", id, "JobState") == "NODE_FAIL";
  })) << job_field(*lab, "alpha", id, "JobState");

  ASSERT_TRUE(lab->restart_node("alpha", "alpha-n1")) << "restart_node";
  EXPECT_TRUE(eventually(milliseconds(15000),
                         [&] {
                           auto s = lab->node_state("alpha", "alpha-n1");
                           state = s ? *s : s.error().message;
                           return state == "IDLE";
                         }))
      << "node state after restart " << state;

  // An admin's DOWN stays until resumed.
  ASSERT_TRUE(lab->set_node_down("alpha", "alpha-n1", "lab test"));
  EXPECT_THAT(lab->node_state("alpha", "alpha-n1").value(), ::testing::StartsWith("DOWN"));
  ASSERT_TRUE(lab->resume_node("alpha", "alpha-n1"));
  EXPECT_TRUE(eventually(milliseconds(5000),
                         [&] { return lab->node_state("alpha", "alpha-n1").value() == "IDLE"; }));
}

TEST(slurm_lab, StoppedLoginRefusesConnectionsUntilStarted) {
  auto lab = start_lab({"alpha", "beta"});
  ASSERT_TRUE(lab);
  ASSERT_TRUE(lab->stop_login("alpha"));
  LabCommand refused = lab->ssh("alpha", "squeue");
  EXPECT_EQ(refused.exit_code, 255);
  EXPECT_THAT(refused.err, HasSubstr("Connection refused"));
  // The cluster behind it and the other login node are unaffected.
  EXPECT_TRUE(lab->slurm("alpha", {"squeue", "-h"}));
  EXPECT_EQ(lab->ssh("beta", "true").exit_code, 0);

  ASSERT_TRUE(lab->start_login("alpha"));
  LabCommand back = lab->ssh("alpha", "scontrol show config | grep ClusterName");
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_THAT(back.out, HasSubstr("alpha"));
}

TEST(slurm_lab, ChangedHostKeyIsRefusedByStrictClients) {
  auto lab = start_lab({"alpha", "beta"});
  ASSERT_TRUE(lab);
  const LabCluster& alpha = lab->cluster("alpha");
  const std::string known_hosts = read_text(alpha.known_hosts);
  auto fp = lab->change_host_key("alpha");
  ASSERT_TRUE(fp) << fp.error().message;
  EXPECT_THAT(*fp, ::testing::StartsWith("SHA256:"));
  EXPECT_NE(*fp, alpha.host_key_fingerprint);
  EXPECT_EQ(read_text(alpha.known_hosts), known_hosts);  // untouched

  LabCommand r = lab->ssh("alpha", "true");
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_THAT(r.err, HasSubstr("REMOTE HOST IDENTIFICATION HAS CHANGED"));
  EXPECT_THAT(r.err, HasSubstr("Host key verification failed"));
  EXPECT_THAT(r.err, HasSubstr(*fp));
  EXPECT_EQ(lab->ssh("beta", "true").exit_code, 0) << "beta keeps its key";
}

TEST(slurm_lab, TwoLabsSideBySideDoNotDisturbEachOther) {
  auto first = start_lab({"alpha"});
  auto second = start_lab({"alpha"});
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->dir(), second->dir());
  EXPECT_NE(first->cluster("alpha").ssh_port, second->cluster("alpha").ssh_port);

  // Each lab's key opens only its own login nodes.
  LabCommand cross = run_lab_command(
      {"ssh", "-F", "/dev/null", "-i", first->cluster("alpha").key_file, "-o", "IdentitiesOnly=yes",
       "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o",
       "UserKnownHostsFile=" + second->cluster("alpha").known_hosts, "-p",
       std::to_string(second->cluster("alpha").ssh_port), "root@127.0.0.1", "true"});
  EXPECT_EQ(cross.exit_code, 255);
  EXPECT_THAT(cross.err, HasSubstr("Permission denied"));

  LabCommand sub =
      second->ssh("alpha", "sbatch --parsable --chdir=" + second->cluster("alpha").storage_root +
                               " --wrap 'sleep 60'");
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  const std::string id = trimmed(sub.out);
  ASSERT_TRUE(eventually(milliseconds(20000),
                         [&] { return job_field(*second, "alpha", id, "JobState") == "RUNNING"; }));

  const std::string first_dir = first->dir();
  const int first_port = first->cluster("alpha").ssh_port;
  const auto t = Clock::now();
  first.reset();  // down.sh --purge, directory removed
  std::cout << "[ lab      ] first lab torn down in " << seconds_since(t) << " s\n";
  EXPECT_THAT(lab_processes(first_dir), ::testing::IsEmpty());
  EXPECT_FALSE(::access(first_dir.c_str(), F_OK) == 0);
  LabCommand gone =
      run_lab_command({"bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/$0", std::to_string(first_port)});
  EXPECT_NE(gone.exit_code, 0);

  // The second lab and its running job are untouched.
  EXPECT_EQ(job_field(*second, "alpha", id, "JobState"), "RUNNING");
  EXPECT_THAT(second->node_state("alpha", "alpha-n1").value(), Not(HasSubstr("NOT_RESPONDING")));
  LabCommand still = second->ssh("alpha", "squeue -h -o %i");
  EXPECT_EQ(still.exit_code, 0) << still.err;
  EXPECT_EQ(trimmed(still.out), id);
  EXPECT_THAT(lab_processes(second->dir()), Not(::testing::IsEmpty()));
}

}  // namespace
}  // namespace orch::test
