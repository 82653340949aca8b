// A local site on a real GPU box (issue 42): an accelerator other than cpu-slot gives each task
// CUDA_VISIBLE_DEVICES from the device indexes its attempt holds, which no other live run holds,
// also after a restart; the preflight and the server's start warn when nvidia-smi lists another
// count. The jobs print what they see; a fake nvidia-smi stands for the driver.
#include <gmock/gmock.h>
#include <sys/stat.h>

#include <cstdlib>
#include <set>

#include "adapters/local/gpu_slots.h"
#include "adapters/local/run_dir.h"
#include "scheduler/model/log_tag.h"
#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Prints what the task sees, "cvd=<value>" ("unset" when the variable is not set at all).
constexpr const char* kPrintDevices =
    "echo \"cvd=${CUDA_VISIBLE_DEVICES-unset} rank=$ORCH_TASK_RANK\"; sleep 30";

class LocalGpuTest : public LocalSiteTest {
 protected:
  void SetUp() override {
    LocalSiteTest::SetUp();
    site_ = make_gpu_site(1, 4);
  }

  // A fake nvidia-smi listing `gpus` devices; one asked anything but the index query exits 3.
  std::string fake_smi(int gpus) {
    std::filesystem::create_directories(root_ + "/bin");
    const std::string path = root_ + "/bin/nvidia-smi";
    std::ofstream(path) << "#!/bin/sh\n"
                        << "[ \"$1\" = --query-gpu=index ] || exit 3\n"
                        << "i=0; while [ $i -lt " << gpus << " ]; do echo $i; i=$((i+1)); done\n";
    chmod(path.c_str(), 0755);
    return path;
  }

  std::unique_ptr<LocalSite> make_gpu_site(int nodes, int gpus_per_node,
                                           const std::string& smi = "") {
    LocalSiteOptions o = make_site(nodes)->options();
    o.gpus_per_node = gpus_per_node;
    o.accelerator = "h100";
    o.nvidia_smi = smi.empty() ? root_ + "/bin/no-nvidia-smi" : smi;
    return std::make_unique<LocalSite>(o);
  }

  static LaunchRequest gpu_job(const std::string& token, int gpus, int nodes = 1,
                               int tasks_per_node = 1) {
    LaunchRequest r = request(token, kPrintDevices);
    r.gpus_per_node = gpus;
    r.nodes = nodes;
    r.tasks_per_node = tasks_per_node;
    return r;
  }

  // What the single-task run `token` printed as its devices.
  std::string devices_of(const std::string& token) {
    EXPECT_TRUE(wait_output(token, "cvd=")) << token << " printed nothing";
    auto out = site_->read_output(token, 0, 1 << 20);
    if (!out.ok()) return "?";
    const auto at = out->find("cvd=") + 4;
    return out->substr(at, out->find(' ', at) - at);
  }

  // rank -> devices, from every task of a gang (each line tagged "[node/rank] ").
  std::map<int, std::string> devices_by_rank(const std::string& token, int tasks) {
    std::map<int, std::string> out;
    eventually([&] {
      auto text = site_->read_output(token, 0, 1 << 20);
      if (!text.ok()) return false;
      std::istringstream in(*text);
      std::string line;
      while (std::getline(in, line)) {
        const std::string l(strip_log_tag(line));
        if (l.rfind("cvd=", 0) != 0) continue;
        const auto space = l.find(' ');
        out[std::stoi(l.substr(l.find("rank=") + 5))] = l.substr(4, space - 4);
      }
      return static_cast<int>(out.size()) == tasks;
    });
    return out;
  }

  // Launches a gang and remembers every task's process group for cleanup.
  void launch_gang(const LaunchRequest& r) {
    launch_ok(r);
    for (int rank = 1; rank < r.nodes * r.tasks_per_node; ++rank) {
      const std::string pid =
          slurp(run_dir(r.token) + "/tasks/" + std::to_string(rank) + "/agent.pid");
      if (std::atoi(pid.c_str()) > 1) pgids_.push_back(std::atoi(pid.c_str()));
    }
  }

  void stop(const std::string& token) {
    ASSERT_TRUE(site_->cancel(token).ok());
    ASSERT_EQ(wait_exited(token).phase, RunPhase::exited);
  }
};

const PreflightCheck* gpus_check(const std::vector<PreflightCheck>& checks) {
  for (const auto& c : checks) {
    if (c.name == "gpus") return &c;
  }
  return nullptr;
}

TEST(GpuSlots, ANodeTakesItsOwnFreeSlotsFirstThenTheMachinesLowestFreeOnes) {
  local::HeldGpus held{{5, "a"}, {1, "b"}};
  EXPECT_EQ(local::take_devices(1, 4, 8, 3, "c", held), (std::vector<int>{4, 6, 7}));
  EXPECT_EQ(held.at(6), "c");
  EXPECT_EQ(local::take_devices(1, 4, 8, 2, "d", held), (std::vector<int>{0, 2}));
  EXPECT_EQ(local::take_devices(0, 4, 8, 2, "e", held), std::nullopt) << "only device 3 is free";
  EXPECT_EQ(held.count(3), 0u) << "a refusal takes nothing";
  EXPECT_EQ(local::take_devices(0, 4, 8, 0, "f", held), std::vector<int>{});
  EXPECT_EQ(local::device_list({2, 3}), "2,3");
  EXPECT_EQ(local::device_list({}), "");
}

TEST(GpuSlots, TheGpuCheckWarnsOnAnotherCountAndOnNoCountButNeverFails) {
  local::MachineGpus eight{8, ""};
  PreflightCheck more = local::gpu_count_check(1, 4, "h100", eight);
  EXPECT_TRUE(more.ok);
  EXPECT_TRUE(local::is_warning(more));
  EXPECT_THAT(more.why, HasSubstr("declares 4 h100 GPU(s) (1 node(s) x 4)"));
  EXPECT_THAT(more.why, HasSubstr("nvidia-smi lists 8"));
  EXPECT_THAT(more.why, HasSubstr("devices 4..7 are never given to a job"));
  PreflightCheck fewer = local::gpu_count_check(2, 8, "h100", eight);
  EXPECT_THAT(fewer.why, HasSubstr("device indexes 8..15 will not find them"));
  PreflightCheck same = local::gpu_count_check(2, 4, "h100", eight);
  EXPECT_TRUE(same.ok);
  EXPECT_FALSE(local::is_warning(same)) << same.why;
  PreflightCheck none = local::gpu_count_check(1, 4, "h100", {std::nullopt, "no driver"});
  EXPECT_TRUE(none.ok);
  EXPECT_TRUE(local::is_warning(none));
  EXPECT_THAT(none.why, HasSubstr("cannot count this machine's GPUs: no driver"));
}

TEST_F(LocalGpuTest, TwoJobsOnAFourGpuSiteSeeDisjointDevices) {
  launch_ok(gpu_job("job-a", 2));
  launch_ok(gpu_job("job-b", 2));
  const std::string a = devices_of("job-a"), b = devices_of("job-b");
  EXPECT_EQ(a, "0,1");
  EXPECT_EQ(b, "2,3");
  // What each holds is on disk, where a restarted server reads it.
  auto stored = local::request_from_json(slurp(run_dir("job-b") + "/request.json"), "b");
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(stored->gpus.at("loc-n0"), (std::vector<int>{2, 3}));
}

TEST_F(LocalGpuTest, ARestartedSiteGivesOutNoDeviceALiveRunHolds) {
  launch_ok(gpu_job("job-a", 2));
  launch_ok(gpu_job("job-b", 1));
  ASSERT_EQ(devices_of("job-a"), "0,1");
  ASSERT_EQ(devices_of("job-b"), "2");
  stop("job-b");                // its device is free again; job-a's are not
  site_ = make_gpu_site(1, 4);  // the server restarts
  launch_ok(gpu_job("job-c", 2));
  EXPECT_EQ(devices_of("job-c"), "2,3");

  // Nothing left: refused, naming who holds what, rather than shared.
  auto refused = site_->launch(gpu_job("job-d", 1));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::conflict);
  EXPECT_THAT(refused.error().message, HasSubstr("only 0 of its 4 GPUs are free"));
  EXPECT_THAT(refused.error().message, HasSubstr("held: 0,1 by job-a; 2,3 by job-c"));
  stop("job-a");
  launch_ok(gpu_job("job-e", 2));
  EXPECT_EQ(devices_of("job-e"), "0,1");
}

TEST_F(LocalGpuTest, AJobAskingForMoreGpusThanANodeHasIsInvalid) {
  auto refused = site_->launch(gpu_job("job-big", 8));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid);
  EXPECT_THAT(refused.error().message, HasSubstr("its nodes have 4"));
}

TEST_F(LocalGpuTest, EachVirtualNodeHasItsOwnShareOfTheMachineAndBorrowsWhenItIsTaken) {
  site_ = make_gpu_site(2, 4);
  // A gang of 2 nodes x 2 tasks, 2 GPUs a node: loc-n0 is devices 0..3, loc-n1 4..7. Every task
  // of a node sees its attempt's devices there and picks its own by LOCAL_RANK.
  launch_gang(gpu_job("job-gang", 2, 2, 2));
  auto seen = devices_by_rank("job-gang", 4);
  EXPECT_EQ(seen[0], "0,1");
  EXPECT_EQ(seen[1], "0,1");
  EXPECT_EQ(seen[2], "4,5");
  EXPECT_EQ(seen[3], "4,5");
  // loc-n0 has 2 of its own left: a 3-GPU job there takes them and the machine's lowest free.
  launch_ok(gpu_job("job-three", 3));
  EXPECT_EQ(devices_of("job-three"), "2,3,6");
  EXPECT_EQ(site_->launch(gpu_job("job-two", 2)).error().kind, ErrorKind::conflict)
      << "one device is left";
}

TEST_F(LocalGpuTest, AJobThatAsksForNoGpuSeesNone) {
  launch_ok(gpu_job("job-cpu", 0));
  EXPECT_EQ(devices_of("job-cpu"), "");
}

TEST_F(LocalGpuTest, TheJobsOwnCudaVisibleDevicesIsReplacedAndTheOutputSaysSo) {
  LaunchRequest r = gpu_job("job-own", 1);
  r.env["CUDA_VISIBLE_DEVICES"] = "3";
  launch_ok(r);
  EXPECT_EQ(devices_of("job-own"), "0");
  EXPECT_THAT(*site_->read_output("job-own", 0, 1 << 20),
              HasSubstr("the job's own CUDA_VISIBLE_DEVICES=3 is replaced"));
}

TEST_F(LocalSiteTest, ACpuSlotSiteSetsNoCudaVisibleDevices) {
  LaunchRequest r = request("job-slot", kPrintDevices);
  launch_ok(r);
  ASSERT_TRUE(wait_output("job-slot", "cvd="));
  EXPECT_THAT(*site_->read_output("job-slot", 0, 1 << 20), HasSubstr("cvd=unset"));
  EXPECT_EQ(gpus_check(site_->preflight()), nullptr) << "a cpu-slot site has no GPUs to count";
}

TEST_F(LocalGpuTest, ThePreflightWarnsWhenNvidiaSmiListsAnotherCount) {
  const PreflightCheck* differs = nullptr;
  auto checks = make_gpu_site(1, 4, fake_smi(8))->preflight();
  differs = gpus_check(checks);
  ASSERT_NE(differs, nullptr);
  EXPECT_EQ(first_failure(checks), nullptr) << "a warning, the site still takes jobs";
  EXPECT_TRUE(local::is_warning(*differs));
  EXPECT_THAT(differs->why, HasSubstr("nvidia-smi lists 8 on this machine"));

  auto agree = make_gpu_site(2, 4, fake_smi(8))->preflight();
  EXPECT_FALSE(local::is_warning(*gpus_check(agree))) << gpus_check(agree)->why;

  auto missing = make_gpu_site(1, 4)->preflight();
  EXPECT_THAT(gpus_check(missing)->why, HasSubstr("cannot count this machine's GPUs"));
  EXPECT_EQ(first_failure(missing), nullptr);
}

TEST_F(LocalGpuTest, AFailingNvidiaSmiIsSaidNotFatal) {
  const std::string smi = root_ + "/bin/broken-smi";
  std::filesystem::create_directories(root_ + "/bin");
  std::ofstream(smi) << "#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn'\"'\"'t "
                        "communicate with the NVIDIA driver'\nexit 9\n";
  chmod(smi.c_str(), 0755);
  const PreflightCheck* check = nullptr;
  auto checks = make_gpu_site(1, 4, smi)->preflight();
  check = gpus_check(checks);
  ASSERT_NE(check, nullptr);
  EXPECT_TRUE(check->ok);
  EXPECT_THAT(check->why, HasSubstr("failed (exit 9): NVIDIA-SMI has failed"));
}

// What `orchestrate serve` does for each local cluster (make_local_site, the site factory):
// one warning line on stderr when nvidia-smi, first on PATH, lists another count.
TEST_F(LocalGpuTest, ServeWarnsOnStderrWhenTheMachineHasAnotherGpuCount) {
  fake_smi(8);
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", (root_ + "/bin:" + saved).c_str(), 1);
  ClusterSpec cluster;
  cluster.name = "box";
  cluster.nodes = 1;
  cluster.gpus_per_node = 4;
  cluster.accelerator = "h100";
  cluster.storage_root = root_ + "/box";
  ::testing::internal::CaptureStderr();
  auto made = make_local_site(cluster, SiteContext{.agent_path = kAgentPath});
  cluster.name = "cpu";
  cluster.accelerator = "cpu-slot";
  auto cpu = make_local_site(cluster, SiteContext{.agent_path = kAgentPath});
  const std::string err = ::testing::internal::GetCapturedStderr();
  ::setenv("PATH", saved.c_str(), 1);
  ASSERT_TRUE(made.ok()) << made.error().message;
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  EXPECT_THAT(err, HasSubstr("orchestrate: WARNING: cluster box: the site declares 4 h100 GPU(s)"));
  EXPECT_THAT(err, HasSubstr("nvidia-smi lists 8"));
  EXPECT_THAT(err, Not(HasSubstr("cluster cpu")));
}

TEST_F(LocalGpuTest, AMachineWithoutNvidiaSmiIsSaidAtMostOnce) {
  ::testing::internal::CaptureStderr();
  make_gpu_site(1, 4)->warn_about_gpus();
  make_gpu_site(1, 2)->warn_about_gpus();
  const std::string err = ::testing::internal::GetCapturedStderr();
  const auto first = err.find("cannot count");
  if (first != std::string::npos) {
    EXPECT_EQ(err.find("cannot count", first + 1), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace orch::testing
