// KubernetesSite judging the records its agents push home (issue 44) on the fake API server in
// this process: the pods run (local processes) and the API says so, while what the agents
// pushed comes from an in-memory PushedRecordSource with a clock the test sets (the server's
// own source is web/'s; this is the seam's test double). A pod silent while its peer is fresh
// has lost its node though the API still says Running; every pod silent at once is not a node;
// no silence is judged before the server has served a whole timeout; a pushed GPU fault ends
// the attempt with its cause; an io stall is an alert.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "adapters/kubernetes/kube_config.h"
#include "adapters/kubernetes/kube_site.h"
#include "scheduler/pushed_records.h"
#include "testkit/fake_kube/sandbox.h"

namespace orch {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr std::int64_t kNow = 1'800'000'000'000;  // the test's server clock
constexpr std::int64_t kTimeoutMs = 5000;         // the attempts' heartbeat timeout

// The seam's test double: what each task pushed last, on a clock the test sets.
class MemoryRecords : public PushedRecordSource {
 public:
  std::vector<PushedTask> tasks(const std::string& token) override {
    std::lock_guard<std::mutex> lock(mu_);
    return by_token_[token];
  }
  std::int64_t serving_since_ms() const override { return serving_since_; }
  std::int64_t now_ms() const override { return kNow; }

  void set(const std::string& token, std::vector<PushedTask> tasks) {
    std::lock_guard<std::mutex> lock(mu_);
    by_token_[token] = std::move(tasks);
  }
  std::int64_t serving_since_ = kNow - 60'000;

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<PushedTask>> by_token_;
};

// A task's newest record: a heartbeat that reached the server `age_ms` before now.
PushedTask heartbeat(int rank, std::int64_t age_ms) {
  PushedTask t;
  t.rank = rank;
  t.node = "pod-host-" + std::to_string(rank);  // the agent's name for it: the pod's host name
  t.last_seq = 7;
  t.received_ms = kNow - age_ms;
  t.at_ms = t.received_ms - 20;
  t.event = "heartbeat";
  return t;
}

class KubeSitePushTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_ = std::make_unique<fake_kube::FakeKubeSandbox>("kube-push");
    ClusterSpec spec;
    spec.name = "kube";
    spec.provider = "kubernetes";
    spec.kubernetes.kubeconfig = fake_->kubeconfig();
    spec.kubernetes.pod.image = "fake/trainer";
    spec.kubernetes.termination_grace_s = 1;
    home_.records = &records_;
    auto target = load_kube_target(fake_->kubeconfig(), "", "");
    ASSERT_TRUE(target.ok()) << target.error().message;
    site_ = std::make_unique<KubernetesSite>(spec, std::move(*target), &home_);
  }
  void TearDown() override {
    site_.reset();
    fake_.reset();
  }

  // A gang of `nodes` pods sleeping, launched with heartbeats; returns once the API shows every
  // pod Running, with the nodes by rank.
  std::vector<std::string> launch_running(const std::string& token, int nodes) {
    LaunchRequest r;
    r.token = token;
    r.job_id = 9;
    r.attempt_no = 1;
    r.command = "sleep 60";
    r.nodes = nodes;
    r.gpus_per_node = 2;
    r.heartbeat_s = 1;
    r.heartbeat_timeout_s = kTimeoutMs / 1000.0;
    auto launched = site_->launch(r);
    EXPECT_TRUE(launched.ok()) << launched.error().message;
    std::vector<std::string> by_rank(nodes);
    const auto end = std::chrono::steady_clock::now() + milliseconds(30000);
    while (std::chrono::steady_clock::now() < end) {
      auto pods = fake_->api(
          "GET",
          "/api/v1/namespaces/default/pods?labelSelector=orchestrate.dev%2Ftoken%3D" + token);
      int running = 0;
      for (const auto& p : pods.json().value("items", nlohmann::json::array())) {
        if (p["status"].value("phase", "") != "Running") continue;
        const auto& a = p["metadata"].value("annotations", nlohmann::json::object());
        const int rank = std::stoi(a.value("batch.kubernetes.io/job-completion-index", "0"));
        by_rank.at(rank) = p["spec"]["nodeName"];
        ++running;
      }
      auto obs = site_->observe(token, 0);
      if (running == nodes && obs.ok() && obs->phase == RunPhase::running) return by_rank;
      std::this_thread::sleep_for(milliseconds(100));
    }
    ADD_FAILURE() << "the pods of " << token << " never all ran";
    return by_rank;
  }
  bool job_exists(const std::string& token) {
    return fake_->api("GET", "/apis/batch/v1/namespaces/default/jobs/" + token).status == 200;
  }

  std::unique_ptr<fake_kube::FakeKubeSandbox> fake_;
  MemoryRecords records_;
  PushHome home_;
  std::unique_ptr<KubernetesSite> site_;
};

// Named kube_* so that `ctest -R kube` selects the suite.
using kube_site_push = KubeSitePushTest;

TEST_F(kube_site_push, ASilentPodWhileItsPeerIsFreshIsNodeLostNamingItsNode) {
  const auto nodes = launch_running("gang-silent", 2);
  records_.set("gang-silent", {heartbeat(0, 400), heartbeat(1, kTimeoutMs + 1000)});
  auto obs = site_->observe("gang-silent", 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  ASSERT_EQ(obs->phase, RunPhase::exited);
  ASSERT_TRUE(obs->exit.has_value());
  EXPECT_EQ(obs->exit->cause, ExitCause::node_lost);
  EXPECT_TRUE(obs->exit->node_lost);
  EXPECT_EQ(obs->exit->failed_node, nodes[1]) << "the API's node of rank 1, not the pod's host";
  EXPECT_EQ(obs->exit->failed_rank, 1);
  EXPECT_THAT(obs->exit->detail, HasSubstr("no heartbeat from task 1 on " + nodes[1] + " for 6 s"));
  EXPECT_THAT(obs->exit->detail, HasSubstr("still Running in the API"));
  EXPECT_FALSE(job_exists("gang-silent")) << "the Job goes: its silent pod runs as far as "
                                             "Kubernetes knows";
}

TEST_F(kube_site_push, EveryPodSilentAtOnceIsNotANodeLoss) {
  launch_running("gang-quiet", 2);
  records_.set("gang-quiet", {heartbeat(0, kTimeoutMs + 1000), heartbeat(1, kTimeoutMs + 2000)});
  auto obs = site_->observe("gang-quiet", 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  EXPECT_EQ(obs->phase, RunPhase::running);
  EXPECT_TRUE(job_exists("gang-quiet"));
}

TEST_F(kube_site_push, NoSilenceIsJudgedBeforeTheServerHasServedATimeout) {
  launch_running("gang-restart", 2);
  records_.set("gang-restart", {heartbeat(0, 100), heartbeat(1, 30'000)});
  // The server came back 4 s ago: rank 1's agent may still be backing off.
  records_.serving_since_ = kNow - kTimeoutMs + 1000;
  auto obs = site_->observe("gang-restart", 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  EXPECT_EQ(obs->phase, RunPhase::running);
  // A whole timeout served, and rank 1 still silent: its node is lost.
  records_.serving_since_ = kNow - kTimeoutMs;
  obs = site_->observe("gang-restart", 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  ASSERT_EQ(obs->phase, RunPhase::exited);
  EXPECT_EQ(obs->exit->cause, ExitCause::node_lost);
}

TEST_F(kube_site_push, APodThatNeverPushedIsNotSilent) {
  launch_running("gang-late", 2);
  records_.set("gang-late", {heartbeat(0, 100)});  // rank 1's agent has not pushed yet
  auto obs = site_->observe("gang-late", 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  EXPECT_EQ(obs->phase, RunPhase::running);
}

TEST_F(kube_site_push, APushedGpuFaultEndsTheAttemptWithGpuXid) {
  const auto nodes = launch_running("gang-xid", 2);
  PushedTask faulted = heartbeat(1, 300);
  faulted.event = "fault";
  TaskFault f;
  f.cause = ExitCause::gpu_xid;
  f.xid = 79;
  f.gpu = 3;
  f.detail = "Xid 79 on GPU 3 (PCI 0000:3b:00): GPU has fallen off the bus";
  f.at_ms = kNow - 300;
  faulted.fault = f;
  records_.set("gang-xid", {heartbeat(0, 100), faulted});
  auto obs = site_->observe("gang-xid", 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  ASSERT_EQ(obs->phase, RunPhase::exited);
  EXPECT_EQ(obs->exit->cause, ExitCause::gpu_xid);
  EXPECT_EQ(obs->exit->failed_node, nodes[1]);
  EXPECT_THAT(obs->exit->detail, HasSubstr("Xid 79"));
  EXPECT_FALSE(job_exists("gang-xid"));
}

TEST_F(kube_site_push, APushedIoStallIsAnAlertOfItsPodsNode) {
  const auto nodes = launch_running("alone-stall", 1);
  PushedTask stalled = heartbeat(0, 200);
  TaskAlert a;
  a.kind = "io_stall";
  a.step = 40;
  a.path = "/ckpt/step-40";
  a.detail = "the save of step 40 to /ckpt/step-40 has run 130 s (bound 100 s)";
  stalled.stall = a;
  records_.set("alone-stall", {stalled});
  auto obs = site_->observe("alone-stall", 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  EXPECT_EQ(obs->phase, RunPhase::running);
  ASSERT_EQ(obs->alerts.size(), 1U);
  EXPECT_EQ(obs->alerts[0].kind, "io_stall");
  EXPECT_EQ(obs->alerts[0].node, nodes[0]);
  EXPECT_EQ(obs->alerts[0].rank, 0);
  EXPECT_EQ(obs->alerts[0].step, 40);
}

TEST_F(kube_site_push, ASignalToAnUnknownTokenOrABadSignalNameIsAnsweredPlainly) {
  EXPECT_TRUE(site_->signal("never-launched", "USR1").ok());
  auto bad = site_->signal("never-launched", "KILL");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid);
  EXPECT_THAT(bad.error().message, HasSubstr("expected USR1, USR2, INT or HUP"));
}

}  // namespace
}  // namespace orch
