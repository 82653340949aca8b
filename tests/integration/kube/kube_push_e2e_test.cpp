// Issue 44's acceptance on Kubernetes, end to end: the real `orchestrate serve` over TLS on a
// fixed port drives the fake API server (in this test process), whose pods run the agent
// (the agent image maps to this build's agent) under which the job runs; the agents push their
// records home to the server (kubernetes.push_url).
// - A node of a 2-pod gang dies while the API still says its pod runs (the fake's freeze hook):
//   node_lost within heartbeat_timeout_s + 5 s, and the job resumes without that node.
// - A preempted job gets SIGUSR1 through pods/exec to its agent, saves, and resumes from that
//   save.
// - The server SIGKILLed mid-run and started again on the same state: no false verdict after
//   it, no lost one (a node that died while it was down is found from the stored records), and
//   nothing launched twice.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "testkit/fake_kube/sandbox.h"
#include "testkit/job_user.h"
#include "tests/integration/e2e/server_fixture.h"

namespace orch::e2e {
namespace {

// A port nothing listens on now (the kernel's pick), for a server that must keep it across a
// restart: its pods' agents were told where home is.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

class KubePushE2eTest : public ServerFixture {
 protected:
  virtual int kube_nodes() const { return 3; }
  virtual std::string more_config() const { return ""; }

  void SetUp() override {
    wait_timeout_ = milliseconds(60000);
    final_timeout_ = milliseconds(120000);
    poll_ = milliseconds(100);
    fake_ = std::make_unique<fake_kube::FakeKubeSandbox>("kube-push-e2e",
                                                         fake_kube::uniform_nodes(kube_nodes(), 2));
    const std::string kubeconfig = fake_->kubeconfig();
    // The server's own certificate (127.0.0.1) from a CA of its own.
    server_pki_ = fake_kube::make_test_pki(fake_->dir() + "/server-pki", "orchestrate-e2e");
    port_ = free_port();
    ASSERT_GT(port_, 0);
    kube_mount_ = fake_->dir() + "/kube-mnt/ckpt";
    start_with("server:\n  tls: {cert: " + server_pki_.server_cert +
               ", key: " + server_pki_.server_key + "}\n" + more_config() +
               "clusters:\n"
               "  - name: kube\n"
               "    provider: kubernetes\n"
               "    nodes: " +
               std::to_string(kube_nodes()) +
               "\n    gpus_per_node: 2\n"
               "    accelerator: cpu-slot\n"
               "    peak_tflops: 0.001\n"
               "    poll_interval_ms: 100\n"
               "    storage: {checkpoints: " +
               kube_mount_ + "}\n    kubernetes: {kubeconfig: " + kubeconfig +
               ", image: fake/toy, termination_grace_s: 5, push_url: \"https://127.0.0.1:" +
               std::to_string(port_) +
               "\", volumes: [{name: ckpt, claim: train-ckpt, mount: " + kube_mount_ + "}]}\n");
    if (server_) remember_ca(url_, server_pki_.ca_cert);
  }
  void before_cleanup() override {
    kill_leftover_jobs(state_);
    fake_.reset();
  }

  fake_kube::KubeReply api(const std::string& method, const std::string& target) {
    return fake_->api(method, target);
  }
  // The pods of an attempt as the API shows them.
  json pods_of(const std::string& token) {
    fake_kube::KubeReply r = api(
        "GET", "/api/v1/namespaces/default/pods?labelSelector=orchestrate.dev%2Ftoken%3D" + token);
    return r.status == 200 ? r.json()["items"] : json::array();
  }
  // The node of the attempt's pod of `rank` once it runs; "" if it does not within a minute.
  std::string running_node(const std::string& token, int rank) {
    std::string node;
    eventually([&] {
      for (const json& p : pods_of(token)) {
        const json& a = p["metadata"].value("annotations", json::object());
        if (a.value("batch.kubernetes.io/job-completion-index", "0") == std::to_string(rank) &&
            p["status"].value("phase", "") == "Running") {
          node = p["spec"]["nodeName"];
        }
      }
      return !node.empty();
    });
    return node;
  }
  std::string first_token(std::int64_t id) {
    json list = attempts(id);
    return list.empty() ? "" : list[0].value("token", "");
  }
  // Until the attempt's first attempt has ended; its cause then ("" on time out).
  std::string wait_first_cause(std::int64_t id, milliseconds limit) {
    std::string cause;
    eventually(
        [&] {
          json list = attempts(id);
          if (list.empty() || list[0]["ended_ms"].is_null()) return false;
          cause = list[0].value("cause", "");
          return true;
        },
        limit);
    return cause;
  }
  // The events of the job that mention `text`.
  int events_mentioning(std::int64_t id, const std::string& text) {
    int n = 0;
    for (const auto& e : events(id)) {
      n += e.value("message", "").find(text) != std::string::npos ? 1 : 0;
    }
    return n;
  }
  int jobs_in_api() {
    fake_kube::KubeReply r = api("GET", "/apis/batch/v1/namespaces/default/jobs");
    return r.status == 200 ? static_cast<int>(r.json()["items"].size()) : -1;
  }

  // Until it runs on kube: the job's id, its first attempt's token and the node of its rank 1,
  // once both pods run and their agents have pushed (a record a second, heartbeats every third
  // of the timeout). 0 after a test failure.
  std::int64_t run_gang(const std::string& name, int timeout_s, std::string& token,
                        std::string& node) {
    const std::int64_t id = submit(gang_yaml(name, timeout_s));
    if (id <= 0 || wait_job(
                       id, [](const json& j) { return j["state"] == "running"; }, "run")
                       .is_null()) {
      return 0;
    }
    token = first_token(id);
    node = running_node(token, 1);
    EXPECT_FALSE(node.empty()) << describe_job(url_, id);
    EXPECT_FALSE(running_node(token, 0).empty()) << describe_job(url_, id);
    std::this_thread::sleep_for(milliseconds(3000));
    return node.empty() ? 0 : id;
  }
  // A 2-pod gang that sleeps on its first attempt and ends at once on the next.
  static std::string gang_yaml(const std::string& name, int timeout_s) {
    return "name: " + name +
           "\ncommand: if [ \"$ORCH_ATTEMPT\" = 1 ]; then sleep 120; fi\n"
           "resources: {nodes: 2, gpus_per_node: 2}\n"
           "health: {heartbeat_timeout_s: " +
           std::to_string(timeout_s) +
           "}\n"
           "restart: {max_infra_restarts: 3, max_user_restarts: 0, backoff: {initial_s: 0.1}}\n"
           "placement: {allowed: [kube]}\n";
  }

  std::unique_ptr<fake_kube::FakeKubeSandbox> fake_;
  fake_kube::TestPki server_pki_;
  std::string kube_mount_;
};

TEST_F(KubePushE2eTest, ANodeThatDiesWhileTheApiSaysRunningIsLostWithinTheHeartbeatTimeout) {
  constexpr int kTimeoutS = 5;
  std::string token, node;
  const std::int64_t id = run_gang("frozen", kTimeoutS, token, node);
  ASSERT_GT(id, 0);

  const auto died = std::chrono::steady_clock::now();
  ASSERT_EQ(api("POST", "/fake/nodes/" + node + "/freeze").status, 200);
  const std::string cause = wait_first_cause(id, milliseconds((kTimeoutS + 20) * 1000));
  const double detected_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - died).count();
  std::printf(
      "kubernetes node loss (pushed heartbeats, timeout %d s): detected %.2f s after "
      "the node died\n",
      kTimeoutS, detected_s);
  ASSERT_EQ(cause, "node_lost") << describe_job(url_, id);
  EXPECT_LT(detected_s, kTimeoutS + 5.0);
  // Kubernetes never knew: the node is Ready, and the verdict says whose silence it was.
  fake_kube::KubeReply n = api("GET", "/api/v1/nodes/" + node);
  EXPECT_NE(n.body.find(R"("type":"Ready")"), std::string::npos);
  EXPECT_EQ(n.body.find(R"("status":"Unknown")"), std::string::npos) << n.body;
  EXPECT_GE(events_mentioning(id, "no heartbeat from task 1 on " + node), 1)
      << describe_job(url_, id);
  EXPECT_GE(events_mentioning(id, "still Running in the API"), 1) << describe_job(url_, id);

  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[1]["cluster"], "kube");
  EXPECT_EQ(node_set(list[1]).count(node), 0u) << "resumed without the dead node: " << list.dump();
}

// The server killed mid-run: its agents back off and come back; nothing is judged silent while
// they do, a node that died while it was down is still found (the records are stored), and each
// attempt was launched once.
TEST_F(KubePushE2eTest, AServerRestartedMidRunLosesNoVerdictAndLaunchesNothingTwice) {
  constexpr int kTimeoutS = 6;
  std::string token, node;
  const std::int64_t id = run_gang("restarted", kTimeoutS, token, node);
  ASSERT_GT(id, 0);

  // A restart with nothing wrong: no verdict from the gap.
  server_->kill9();
  std::this_thread::sleep_for(milliseconds(2000));
  start_server();
  std::this_thread::sleep_for(milliseconds((kTimeoutS + 4) * 1000));
  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u) << describe_job(url_, id);
  EXPECT_TRUE(list[0]["ended_ms"].is_null()) << describe_job(url_, id);
  EXPECT_EQ(jobs_in_api(), 1);

  // The node dies while the server is down: found after it is back, from what it stored.
  server_->kill9();
  ASSERT_EQ(api("POST", "/fake/nodes/" + node + "/freeze").status, 200);
  std::this_thread::sleep_for(milliseconds(1000));
  start_server();
  ASSERT_EQ(wait_first_cause(id, milliseconds((kTimeoutS + 20) * 1000)), "node_lost")
      << describe_job(url_, id);
  EXPECT_GE(events_mentioning(id, "no heartbeat from task 1 on " + node), 1)
      << describe_job(url_, id);
  list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(node_set(list[1]).count(node), 0u) << list.dump();
  // The first attempt's Job went with its verdict; the second's was made once.
  EXPECT_EQ(jobs_in_api(), 1);
}

// Preemption on Kubernetes (issue 18's protocol): one node of 2 GPUs; the ablation on it gets
// SIGUSR1 through pods/exec to its agent, which passes it to the trainer; it saves, is stopped,
// waits for the hero, and resumes from that save.
class KubePreemptionE2eTest : public KubePushE2eTest {
 protected:
  int kube_nodes() const override { return 1; }
  std::string more_config() const override {
    return "priority_classes: {hero: 1000, ablation: 100}\n";
  }
  void preempt_and_resume(const std::string& victim_command, int steps);
  // The toy trainer, slow enough to be preempted, with no periodic checkpoint.
  static std::string toy_trainer(int steps) {
    return testkit::job_bin_dir() +
           "/toy_trainer --dim 32 --batch 16 --step-delay-ms 40 --ckpt-every 100000 "
           "--keep-ckpts 0 --ckpt-dir \"$ORCH_CHECKPOINT_DIR\" --steps " +
           std::to_string(steps);
  }
};

// The victim (run by `victim_command`, `steps` steps) on the only node is preempted by a hero:
// it gets SIGUSR1 through its agent, saves, is stopped, waits, and resumes from that save.
void KubePreemptionE2eTest::preempt_and_resume(const std::string& victim_command, int steps) {
  const std::int64_t victim = submit(
      "name: ablation\ncommand: " + victim_command + "\nresources: {nodes: 1, gpus_per_node: 2}\n" +
      "model: {parameters: 1024}\npriority: ablation\npreemption: {grace_s: 30}\n"
      "restart: {max_infra_restarts: 0, max_user_restarts: 0}\n");
  ASSERT_GT(victim, 0);
  json trained = wait_job(
      victim, [](const json& j) { return j["step"].is_number() && j["step"].get<int>() >= 20; },
      "train past step 20");
  ASSERT_FALSE(trained.is_null()) << describe_job(url_, victim);

  const std::int64_t hero = submit("name: hero\ncommand: " + toy_trainer(10) +
                                   "\nresources: {nodes: 1, gpus_per_node: 2}\npriority: hero\n");
  ASSERT_GT(hero, 0);
  const std::int64_t asked_at = job(victim)["step"].get<std::int64_t>();
  const auto asked = std::chrono::steady_clock::now();
  ASSERT_FALSE(wait_job(
                   hero, [](const json& j) { return j["state"] == "running"; }, "run")
                   .is_null());
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  std::printf("kubernetes preemption: the hero ran %.2f s after its submit\n", waited_s);
  EXPECT_LT(waited_s, 20.0) << "well within the victim's 30 s grace: it saved on USR1 and stopped";
  EXPECT_EQ(wait_final(hero)["state"], "succeeded") << describe_job(url_, hero);

  json first = attempts(victim).at(0);
  EXPECT_EQ(first["cause"], "priority_preempted") << describe_job(url_, victim);
  ProcessResult explain =
      cli({"--ca", server_pki_.ca_cert, "job", "explain", std::to_string(victim)});
  EXPECT_NE(explain.output.find("asked to save (SIGUSR1)"), std::string::npos) << explain.output;
  EXPECT_NE(explain.output.find("it saved a checkpoint at step"), std::string::npos)
      << explain.output;

  json done = wait_final(victim);
  EXPECT_EQ(done["state"], "succeeded") << describe_job(url_, victim);
  EXPECT_EQ(done["step"], steps);
  const json resumed = attempts(victim).at(1);
  ASSERT_FALSE(resumed["resumed_from"].is_null()) << describe_job(url_, victim);
  // Saved on the signal, after the step it had reached when the hero came: the steps lost are
  // at most those after that save, not the ones since a periodic checkpoint (there is none).
  EXPECT_GE(resumed["resumed_from"]["step"].get<std::int64_t>(), asked_at)
      << describe_job(url_, victim);
}

TEST_F(KubePreemptionE2eTest, APreemptedJobSavesOnUsr1AndResumesFromThatSave) {
  preempt_and_resume(toy_trainer(300), 300);
}

// The same with a user's PyTorch trainer as docs/progress-protocol.md has users write it
// (examples/pytorch/train.py: saves and goes on at SIGUSR1, resumes from $ORCH_RESUME_FROM), run
// in the pod under the agent. Skipped where PyTorch is not installed (`make test` installs
// Debian's python3-torch).
TEST_F(KubePreemptionE2eTest, APyTorchTrainerPreemptedOnKubernetesSavesOnUsr1AndResumes) {
  if (run_process({"/usr/bin/python3", "-c", "import torch"}, milliseconds(60000)).exit_code != 0) {
    GTEST_SKIP() << "PyTorch is not installed (Debian's python3-torch)";
  }
  preempt_and_resume("/usr/bin/python3 " ORCH_SOURCE_DIR
                     "/examples/pytorch/train.py --steps 200 --ckpt-every 100000 --dim 16 "
                     "--batch 8 --step-delay-s 0.04",
                     200);
}

}  // namespace
}  // namespace orch::e2e
