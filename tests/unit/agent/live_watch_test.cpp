// `orchestrate-agent run` with the live watch on (issue 43), end to end through the real binary:
// a scripted kernel-log file that receives an Xid line while the job runs, a stand-in nvidia-smi
// whose ECC count rises, the fault record and its repetition in every later record, and
// --fault-action stop.
#include <gmock/gmock.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "tests/unit/agent/agent_test_util.h"

namespace orch::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kXidLine =
    "[ 812.1] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.";

class LiveWatchTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    // A line already in the log before the job starts is the past: the watch ignores it.
    std::ofstream(kmsg()) << "[ 1.0] NVRM: Xid (PCI:0000:18:00): 48, an old double-bit error\n";
    // The stand-in nvidia-smi prints two GPUs; GPU 3's uncorrectable ECC count is read from a
    // file the test may change.
    std::ofstream(dir_ + "/ecc") << "0\n";
    std::ofstream(smi()) << "#!/bin/sh\n"
                            "echo '0, 00000000:18:00.0, 0, 40, 300.0, 0x0000000000000000'\n"
                            "echo \"3, 00000000:3B:00.0, $(cat "
                         << dir_ << "/ecc), 71, 350.5, 0x0000000000000040\"\n";
    chmod(smi().c_str(), 0755);
  }
  std::string kmsg() const { return dir_ + "/kmsg.log"; }
  std::string smi() const { return dir_ + "/nvidia-smi"; }
  std::string events_path() const { return dir_ + "/events.jsonl"; }
  std::vector<json> events() const {
    std::vector<json> out;
    std::istringstream in(slurp(events_path()));
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }
  std::string flags(const std::string& more = "") const {
    return "--kernel-log " + kmsg() + " --watch-s 0.1 --nvidia-smi " + smi() +
           " --gpu-sample-s 0.2 --heartbeat-s 0.2 --node-name alpha-n2 " + more;
  }
  int run(const std::string& flags, const std::string& script) {
    return agent("run --events " + events_path() + " " + flags + " -- sh -c '" + script + "'");
  }
};

TEST_F(LiveWatchTest, OnlyTheNodesFirstTaskWatches) {
  std::ofstream(dir_ + "/xid") << kXidLine << "\n";
  const std::string place =
      "--node-rank 0 --nnodes 1 --tasks-per-node 2 --master-addr 127.0.0.1 --master-port 29500 ";
  const std::string script = "sleep 0.6; cat " + dir_ + "/xid >> " + kmsg() + "; sleep 0.8";
  EXPECT_EQ(run(flags(place + "--local-rank 1"), script), 0);
  for (const json& e : events()) {
    EXPECT_NE(e["event"], "fault") << e.dump();
    EXPECT_FALSE(e.contains("watch")) << "the second task samples nothing: " << e.dump();
  }
  EXPECT_EQ(run(flags(place + "--local-rank 0"), script), 0);
  bool fault = false;
  for (const json& e : events()) fault = fault || e["event"] == "fault";
  EXPECT_TRUE(fault) << slurp(events_path());
}

TEST_F(LiveWatchTest, AFatalXidWrittenWhileTheJobRunsIsRecordedAndRepeatedUntilTheExit) {
  std::ofstream(dir_ + "/xid") << kXidLine << "\n";
  EXPECT_EQ(run(flags(), "sleep 0.6; cat " + dir_ + "/xid >> " + kmsg() + "; sleep 1"), 0);
  std::vector<json> ev = events();
  int fault_at = -1;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev[i]["event"] == "fault" && fault_at < 0) fault_at = static_cast<int>(i);
  }
  ASSERT_GE(fault_at, 0) << slurp(events_path());
  const json& f = ev[fault_at];
  EXPECT_EQ(f["cause"], "gpu_xid");
  EXPECT_EQ(f["xid"], 79);
  EXPECT_EQ(f["gpu"], 3) << "the PCI id maps to GPU 3 through nvidia-smi";
  EXPECT_EQ(f["pci"], "0000:3b:00");
  EXPECT_EQ(f["node"], "alpha-n2");
  EXPECT_EQ(f["detail"], "Xid 79 on GPU 3 (PCI 0000:3b:00): GPU has fallen off the bus");
  // The old Xid 48 that was in the file at the start is not a fault.
  for (const json& e : ev) {
    if (e["event"] == "fault") {
      EXPECT_EQ(e["xid"], 79);
    }
  }
  // Every later record repeats it, the exit record too; heartbeats carry the readings.
  ASSERT_EQ(ev.back()["event"], "exit");
  int heartbeats_after = 0;
  for (size_t i = fault_at + 1; i < ev.size(); ++i) {
    ASSERT_TRUE(ev[i].contains("fault")) << ev[i].dump();
    EXPECT_EQ(ev[i]["fault"]["xid"], 79);
    EXPECT_FALSE(ev[i]["fault"].contains("event"));
    if (ev[i]["event"] == "heartbeat") {
      ++heartbeats_after;
      EXPECT_EQ(ev[i]["watch"]["temp_max_c"], 71);
      EXPECT_EQ(ev[i]["watch"]["throttle"], json::array({"hw_thermal"}));
    }
  }
  EXPECT_GE(heartbeats_after, 1);
  EXPECT_THAT(err(), HasSubstr("Xid 79 on GPU 3"));
}

TEST_F(LiveWatchTest, AnEccCountThatRisesIsAGpuEccFault) {
  EXPECT_EQ(run(flags(), "sleep 0.6; echo 2 > " + dir_ + "/ecc; sleep 1"), 0);
  json fault;
  for (const json& e : events()) {
    if (e["event"] == "fault") fault = e;
  }
  ASSERT_TRUE(fault.is_object()) << slurp(events_path());
  EXPECT_EQ(fault["cause"], "gpu_ecc");
  EXPECT_EQ(fault["gpu"], 3);
  EXPECT_EQ(fault["ecc_uncorrected"], 2);
  EXPECT_EQ(events().back()["fault"]["cause"], "gpu_ecc");
}

TEST_F(LiveWatchTest, FaultActionStopEndsTheJobAtOnce) {
  std::ofstream(dir_ + "/xid") << kXidLine << "\n";
  const auto started = std::chrono::steady_clock::now();
  // The job would sleep 30 s; the agent SIGTERMs it within a watch period of the line.
  const int rc = run(flags("--fault-action stop --grace-ms 500"),
                     "sleep 0.4; cat " + dir_ + "/xid >> " + kmsg() + "; exec sleep 30");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_EQ(rc, 128 + SIGTERM);
  EXPECT_EQ(events().back()["signal"], SIGTERM);
  EXPECT_EQ(events().back()["fault"]["cause"], "gpu_xid");
}

TEST_F(LiveWatchTest, WithoutAFaultNoRecordNamesOneAndAKernelLogThatAppearsLaterIsFollowed) {
  std::filesystem::remove(kmsg());
  EXPECT_EQ(run(flags(), "sleep 0.5; echo routine line >> " + kmsg() + "; sleep 0.5"), 0);
  for (const json& e : events()) {
    EXPECT_NE(e["event"], "fault");
    EXPECT_FALSE(e.contains("fault"));
  }
}

TEST_F(LiveWatchTest, BadWatchFlagsAreUsageErrorsNamingTheFlag) {
  EXPECT_EQ(run("--fault-action kill", "true"), 2);
  EXPECT_THAT(err(), HasSubstr("--fault-action wants record or stop, got 'kill'"));
  EXPECT_EQ(run("--watch-s soon", "true"), 2);
  EXPECT_THAT(err(), HasSubstr("--watch-s wants seconds"));
}

}  // namespace
}  // namespace orch::testing
