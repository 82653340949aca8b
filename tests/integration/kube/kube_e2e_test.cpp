// Issue 6's acceptance end to end: the real `orchestrate serve` drives a Kubernetes site through
// the API server (the fake one, run in this test process over TLS with a bearer token), beside
// a local site. The toy trainer runs in a pod (a local process), reports progress and MFU, and
// when the fake makes its node NotReady the job resumes on the local site from its latest
// checkpoint.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "testkit/fake_kube/fake_kube_server.h"
#include "testkit/fake_kube/kube_test_client.h"
#include "testkit/fake_kube/test_pki.h"
#include "testkit/job_user.h"
#include "tests/integration/e2e/server_fixture.h"

namespace orch::e2e {
namespace {

class KubeE2eTest : public ServerFixture {
 protected:
  // The fake cluster's shape and the kube cluster's settings; the gang tests change them.
  virtual int kube_nodes() const { return 1; }
  virtual int kube_gpus() const { return 8; }
  virtual std::string kube_extra() const { return ""; }
  // More keys of the kube cluster's entry ("    burn_in: {...}\n").
  virtual std::string kube_cluster_extra() const { return ""; }
  virtual std::vector<fake_kube::NodeConfig> kube_node_configs() const {
    return fake_kube::uniform_nodes(kube_nodes(), kube_gpus());
  }

  void SetUp() override {
    wait_timeout_ = milliseconds(60000);
    final_timeout_ = milliseconds(90000);
    pki_dir_ = std::make_unique<TempDir>();
    pki_ = fake_kube::make_test_pki(pki_dir_->path());
    token_ = fake_kube::random_token();
    fake_kube::FakeKubeOptions o;
    o.cert_file = pki_.server_cert;
    o.key_file = pki_.server_key;
    o.token = token_;
    o.cluster.state_dir = pki_dir_->path() + "/fake";
    // One node by default: when it is lost the cluster has no room left and the job must move.
    o.cluster.nodes = kube_node_configs();
    fake_ = std::make_unique<fake_kube::FakeKubeServer>(o);
    fake_->start();
    const std::string kubeconfig = pki_dir_->path() + "/kubeconfig";
    fake_kube::write_kubeconfig(kubeconfig, {fake_->url(), pki_.ca_cert, token_});
    const std::string ckpt = pki_dir_->path() + "/ckpt";
    // The kube cluster's checkpoints live on a PersistentVolumeClaim (the fake: a directory per
    // claim, linked at the mount path), which the jobs and the storage helper pod both mount.
    kube_mount_ = pki_dir_->path() + "/kube-mnt/ckpt";
    start_with(
        "clusters:\n"
        "  - name: kube\n"
        "    provider: kubernetes\n"
        "    nodes: " +
        std::to_string(kube_nodes()) + "\n    gpus_per_node: " + std::to_string(kube_gpus()) +
        "\n"
        "    accelerator: cpu-slot\n"
        "    peak_tflops: 0.001\n"
        "    poll_interval_ms: 100\n"
        "    storage: {checkpoints: " +
        kube_mount_ + "}\n    kubernetes: {kubeconfig: " + kubeconfig +
        ", image: fake/toy, termination_grace_s: 5, volumes: [{name: ckpt, claim: train-ckpt, "
        "mount: " +
        kube_mount_ + "}]" + kube_extra() + "}\n" + kube_cluster_extra() +
        "  - {name: beta, provider: local, nodes: 2, gpus_per_node: 2, accelerator: cpu-slot,\n"
        "     peak_tflops: 0.001, poll_interval_ms: 100, storage: {checkpoints: " +
        ckpt + "/beta}" + testkit::local_run_as_yaml() + "}\n");
  }
  void before_cleanup() override {
    kill_leftover_jobs(state_);
    if (fake_) fake_->stop();
  }

  // A request to the fake API server as a client with the cluster's token.
  fake_kube::KubeReply api(const std::string& method, const std::string& target,
                           const std::string& body = "") {
    return fake_kube::kube_request({"127.0.0.1", fake_->port(), pki_.ca_cert, token_}, method,
                                   target, body);
  }
  fake_kube::KubeReply hook(const std::string& target) { return api("POST", target); }

  std::unique_ptr<TempDir> pki_dir_;
  fake_kube::TestPki pki_;
  std::string token_;
  std::unique_ptr<fake_kube::FakeKubeServer> fake_;
  std::string kube_mount_;

  // The job's events of one kind, oldest first.
  json events_of(std::int64_t id, const std::string& kind) {
    json out = json::array();
    for (const auto& e : events(id)) {
      if (e.value("kind", "") == kind) out.push_back(e);
    }
    return out;
  }
};

std::string toy_job(const std::string& name, int steps) {
  return "name: " + name + "\ncommand: " + testkit::job_bin_dir() +
         "/toy_trainer --dim 32 --batch 16 --steps " + std::to_string(steps) +
         " --step-delay-ms 40 --ckpt-every 10 --keep-ckpts 0 --ckpt-dir "
         "\"$ORCH_CHECKPOINT_DIR\"\n"
         "resources: {nodes: 1, gpus_per_node: 2}\n"
         "model: {parameters: 1024}\n"
         "checkpoint: {interval_steps: 10}\n"
         "restart: {max_infra_restarts: 3, max_user_restarts: 0, backoff: {initial_s: 0.1}}\n"
         "placement: {preferred: [kube]}\n";
}

// Issue 20's acceptance: a job with its own image, a PVC and shared memory runs at the
// Kubernetes site; its checkpoints are verified there (listed and hashed in the storage helper
// pod), replicated to the local site beta (a tar stream through pods/exec), and when the node is
// lost the job resumes on beta from beta's replica.
TEST_F(KubeE2eTest, ToyTrainerRunsInAPodAndResumesElsewhereFromTheReplicaWhenItsNodeIsLost) {
  const std::int64_t id =
      submit(toy_job("toy", 250) + "kubernetes: {image: fake/trainer:24.05, shm_size: 1Gi}\n");
  ASSERT_GT(id, 0);
  json j = wait_job(
      id,
      [&](const json& now) {
        return now["cluster"] == "kube" && now["state"] == "running" && now["step"].is_number() &&
               now["step"].get<int>() >= 35 && now["mfu"].is_number() &&
               !events_of(id, "checkpoint-replicated").empty();
      },
      "run on kube past step 35 with a checkpoint replicated to beta");
  ASSERT_FALSE(j.is_null()) << describe_job(url_, id);
  EXPECT_GT(j["mfu"].get<double>(), 0.0);
  // Verified where it was saved, then copied to beta and verified there.
  bool verified_at_kube = false;
  for (const auto& e : events_of(id, "checkpoint-verified")) {
    verified_at_kube =
        verified_at_kube || e["message"].get<std::string>().find("at kube") != std::string::npos;
  }
  EXPECT_TRUE(verified_at_kube) << describe_job(url_, id);
  EXPECT_NE(events_of(id, "checkpoint-replicated")[0]["message"].get<std::string>().find(
                "copied to beta and verified"),
            std::string::npos)
      << describe_job(url_, id);

  // The pod as Kubernetes got it: the job's image, the claim, shared memory.
  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u);
  fake_kube::KubeReply pods =
      api("GET", "/api/v1/namespaces/default/pods?labelSelector=orchestrate.dev%2Ftoken%3D" +
                     list[0]["token"].get<std::string>());
  ASSERT_EQ(pods.status, 200) << pods.body;
  const json pod = json::parse(pods.body)["items"].at(0);
  EXPECT_EQ(pod["spec"]["containers"][0]["image"], "fake/trainer:24.05");
  const std::string volumes = pod["spec"]["volumes"].dump();
  EXPECT_NE(volumes.find(R"("claimName":"train-ckpt")"), std::string::npos) << volumes;
  EXPECT_NE(volumes.find(R"("medium":"Memory","sizeLimit":"1Gi")"), std::string::npos) << volumes;
  EXPECT_NE(pod["spec"]["containers"][0]["volumeMounts"].dump().find("/dev/shm"),
            std::string::npos);

  ASSERT_FALSE(list[0]["nodes"].empty()) << list.dump();
  const std::string node = list[0]["nodes"][0];
  fake_kube::KubeReply r = hook("/fake/nodes/" + node + "/notready");
  ASSERT_EQ(r.status, 200) << r.body << r.error;

  json resumed = wait_job(
      id, [](const json& now) { return now["cluster"] == "beta" && now["state"] == "running"; },
      "resume on beta");
  ASSERT_FALSE(resumed.is_null());
  list = attempts(id);
  ASSERT_GE(list.size(), 2u);
  EXPECT_EQ(list[0]["cause"], "node_lost") << list.dump();
  ASSERT_FALSE(list[1]["resumed_from"].is_null()) << describe_job(url_, id);
  // From beta's own copy, not the claim's files at kube.
  const std::string from = list[1]["resumed_from"]["path"];
  EXPECT_EQ(from.find(kube_mount_), std::string::npos) << from;
  EXPECT_NE(from.find("/ckpt/beta"), std::string::npos) << from;

  json done = wait_final(id);
  ASSERT_FALSE(done.is_null());
  EXPECT_EQ(done["state"], "succeeded") << describe_job(url_, id);
  EXPECT_EQ(done["step"], 250);
  // The kubeconfig's bearer token reached the API server and nothing else (issue 16).
  expect_secrets_nowhere({token_}, id);
}

// The API server drops every watch and forgets its history (the next watch from an old
// resourceVersion gets 410 Gone): the site relists, misses nothing, and launches nothing twice.
TEST_F(KubeE2eTest, WatchDroppedAndGoneRelistsWithoutLosingOrRepeatingAnything) {
  const std::int64_t id = submit(toy_job("watched", 120));
  ASSERT_GT(id, 0);
  ASSERT_FALSE(wait_job(
                   id,
                   [](const json& now) {
                     return now["state"] == "running" && now["step"].is_number() &&
                            now["step"].get<int>() >= 20;
                   },
                   "run past step 20")
                   .is_null());
  // 410 both ways a server says it: an ERROR event in a 200 stream (what API servers do), and
  // a plain HTTP 410 answer; the last compact ends the HTTP 410 mode.
  for (const char* compact : {"/fake/compact", "/fake/compact?http=true", "/fake/compact"}) {
    ASSERT_EQ(hook(compact).status, 200);
    ASSERT_EQ(hook("/fake/watches/drop").status, 200);
    std::this_thread::sleep_for(milliseconds(300));
  }
  json j = wait_final(id);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["state"], "succeeded") << describe_job(url_, id);
  EXPECT_EQ(j["step"], 120);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u) << describe_job(url_, id);
  // The API server holds exactly one Job for the attempt.
  fake_kube::KubeReply jobs =
      fake_kube::kube_request({"127.0.0.1", fake_->port(), pki_.ca_cert, token_}, "GET",
                              "/apis/batch/v1/namespaces/default/jobs");
  ASSERT_EQ(jobs.status, 200) << jobs.body;
  EXPECT_EQ(jobs.json()["items"].size(), 1u) << jobs.body;
}

// An image that cannot be pulled is the job's own error, with Kubernetes' words, and spends
// the user budget (here none), never the infra budget.
TEST_F(KubeE2eTest, ImagePullBackOffIsAUserErrorWithKubernetesMessage) {
  const std::string kubeconfig = pki_dir_->path() + "/kubeconfig";
  server_->stop();
  write_file(config_,
             "clusters:\n  - name: kube\n    provider: kubernetes\n    nodes: 1\n"
             "    gpus_per_node: 8\n    poll_interval_ms: 100\n    kubernetes: {kubeconfig: " +
                 kubeconfig + ", image: fake/pull-error}\n");
  start_server();
  const std::int64_t id = submit(
      "name: nopull\ncommand: \"true\"\nrestart: {max_infra_restarts: 3, max_user_restarts: 0}\n");
  ASSERT_GT(id, 0);
  json j = wait_final(id);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["state"], "failed") << describe_job(url_, id);
  EXPECT_EQ(j["infra_restarts"], 0);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["cause"], "user_error");
  bool named = false;
  for (const auto& e : events(id)) {
    // Kubernetes says ErrImagePull first, then ImagePullBackOff between retries: either is final.
    named = named || e["message"].get<std::string>().find("ImagePull") != std::string::npos;
  }
  EXPECT_TRUE(named) << describe_job(url_, id);
}

// Issue 14 on Kubernetes: a gang is an Indexed Job of one pod per node (anti-affinity), each
// pod with its place in the launch contract; a pod whose node is lost ends the gang; a gang
// that cannot all be scheduled within gang_timeout_s gives its pods back and runs elsewhere.
class KubeGangE2eTest : public KubeE2eTest {
 protected:
  int kube_nodes() const override { return 2; }
  int kube_gpus() const override { return 2; }
  std::string kube_extra() const override { return ", gang_timeout_s: 3"; }

  static std::string gang_job(const std::string& name, const std::string& command,
                              const std::string& placement) {
    return "name: " + name + "\ncommand: " + command +
           "\n"
           "resources: {nodes: 2, gpus_per_node: 2}\n"
           "restart: {max_infra_restarts: 3, max_user_restarts: 0, backoff: {initial_s: 0.1}}\n"
           "placement: " +
           placement + "\n";
  }
};

TEST_F(KubeGangE2eTest, ATwoPodGangRunsBothRanksOnTwoNodes) {
  const std::string out = pki_dir_->path() + "/ranks";
  const std::int64_t id =
      submit(gang_job("pair",
                      "mkdir -p " + out +
                          " && echo \"rank=$RANK node_rank=$NODE_RANK world=$WORLD_SIZE "
                          "local=$LOCAL_RANK master=$MASTER_ADDR:$MASTER_PORT\" > " +
                          out + "/rank-$RANK.txt",
                      "{allowed: [kube]}"));
  ASSERT_GT(id, 0);
  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 1u) << list.dump();
  ASSERT_EQ(list[0]["nodes"].size(), 2u) << list.dump();
  EXPECT_NE(list[0]["nodes"][0], list[0]["nodes"][1]) << "one pod per node";
  std::string master;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string text = read_file(out + "/rank-" + std::to_string(rank) + ".txt");
    EXPECT_NE(text.find("rank=" + std::to_string(rank) + " node_rank=" + std::to_string(rank) +
                        " world=2 local=0 master="),
              std::string::npos)
        << text;
    const std::string m = text.substr(text.find("master=") + 7);
    if (rank == 0) master = m;
    EXPECT_EQ(m, master) << "every rank meets at the same address";
    EXPECT_NE(m.find("-0."), std::string::npos) << "index 0 of the headless Service: " << m;
  }
}

TEST_F(KubeGangE2eTest, ANodeMadeNotReadyEndsTheGangAndTheJobRunsElsewhere) {
  // Long on kube, short wherever it goes next.
  const std::int64_t id = submit(
      gang_job("lost", "if [ \"$ORCH_SITE\" = kube ]; then sleep 120; fi", "{preferred: [kube]}"));
  ASSERT_GT(id, 0);
  json running = wait_job(
      id,
      [&](const json& j) {
        return j["state"] == "running" && j["cluster"] == "kube" &&
               attempts(id).at(0)["nodes"].size() == 2;
      },
      "run both pods on kube");
  ASSERT_FALSE(running.is_null());
  const std::string node = attempts(id).at(0)["nodes"][1];
  fake_kube::KubeReply r = hook("/fake/nodes/" + node + "/notready");
  ASSERT_EQ(r.status, 200) << r.body << r.error;
  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[0]["cause"], "node_lost") << list.dump();
  EXPECT_EQ(list[1]["cluster"], "beta") << list.dump();
}

TEST_F(KubeGangE2eTest, AGangThatCannotAllBeScheduledTimesOutAndRunsElsewhere) {
  // Someone else's pod holds one node's GPUs: Kubernetes can place one pod of the gang only.
  fake_kube::KubeReply created = api(
      "POST", "/api/v1/namespaces/default/pods",
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"someone-else"},"spec":{)"
      R"("restartPolicy":"Never","containers":[{"name":"c","image":"x","command":["/bin/sleep",)"
      R"("300"],"resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})");
  ASSERT_EQ(created.status, 201) << created.body << created.error;
  ASSERT_TRUE(eventually([&] {
    fake_kube::KubeReply p = api("GET", "/api/v1/namespaces/default/pods/someone-else");
    return p.body.find("\"Running\"") != std::string::npos;
  })) << "the other pod never ran";

  // The pod that does run holds its node (a pod that finished at once would free it for the
  // other one, which Kubernetes would then place there).
  const std::int64_t id = submit(
      gang_job("wide", "if [ \"$ORCH_SITE\" = kube ]; then sleep 60; fi", "{preferred: [kube]}"));
  ASSERT_GT(id, 0);
  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[0]["cluster"], "kube") << list.dump();
  EXPECT_EQ(list[0]["cause"], "gang_timeout") << list.dump();
  EXPECT_EQ(list[1]["cluster"], "beta") << list.dump();
  // The pod that did run was given back, and the other job's pod was left alone.
  ASSERT_TRUE(eventually([&] {
    fake_kube::KubeReply pods =
        api("GET",
            "/api/v1/namespaces/default/"
            "pods?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dorchestrate");
    return pods.status == 200 && json::parse(pods.body)["items"].empty();
  }));
  EXPECT_EQ(api("GET", "/api/v1/namespaces/default/pods/someone-else").status, 200);
}

// Burn-in on Kubernetes (issue 20): a new three-node cluster is probed with one probe pod per
// node before it gets work. One node is slow: the fake runs its pods at a fifth of the CPU
// (stopped for 40 ms of every 50). Burn-in quarantines that node and admits the others.
class KubeBurnInE2eTest : public KubeE2eTest {
 protected:
  int kube_nodes() const override { return 3; }
  std::vector<fake_kube::NodeConfig> kube_node_configs() const override {
    auto nodes = fake_kube::uniform_nodes(3, 8);
    nodes[2].cpu_share = 0.2;
    return nodes;
  }
  std::string kube_extra() const override { return ", agent: " ORCH_BIN_DIR "/orchestrate-agent"; }
  std::string kube_cluster_extra() const override {
    return "    burn_in: {on_join: true, min_io_ratio: 0.05, io_mb: 4, compute_s: 1}\n";
  }
};

TEST_F(KubeBurnInE2eTest, TheSlowNodeIsQuarantinedAndTheOthersAdmitted) {
  json row;
  ASSERT_TRUE(eventually(
      [&] {
        json list = get_json(url_, "/api/v1/clusters");
        const json& rows = list.is_object() ? list["clusters"] : list;
        for (const auto& c : rows) {
          if (c.value("name", "") == "kube") row = c;
        }
        return row.is_object() && row.value("admission", "") == "active";
      },
      milliseconds(120000)))
      << row.dump();
  json probes = get_json(url_, "/api/v1/clusters/kube/probes");
  ASSERT_TRUE(probes.is_object()) << probes.dump();
  ASSERT_EQ(probes["probes"].size(), 3u) << probes.dump(1);
  json nodes = get_json(url_, "/api/v1/nodes?cluster=kube");
  ASSERT_TRUE(nodes.is_object()) << nodes.dump();
  ASSERT_EQ(nodes["nodes"].size(), 3u) << nodes.dump();
  for (const auto& n : nodes["nodes"]) {
    const std::string want = n["name"] == "node-2" ? "quarantined" : "active";
    EXPECT_EQ(n["state"], want) << n.dump() << "\nprobes: " << probes.dump(1);
  }
}

// Kueue (issue 20): a cluster with a LocalQueue submits suspended Jobs; the attempt stays queued
// (the job placed, not running) while Kueue holds it, and runs once the queue admits it.
class KubeQueueE2eTest : public KubeE2eTest {
 protected:
  std::string kube_extra() const override { return ", queue: team-a"; }
};

TEST_F(KubeQueueE2eTest, AnAttemptStaysQueuedUntilKueueAdmitsIt) {
  const std::int64_t id = submit(
      "name: queued\ncommand: echo ran\nresources: {nodes: 1, gpus_per_node: 2}\n"
      "placement: {allowed: [kube]}\n");
  ASSERT_GT(id, 0);
  ASSERT_FALSE(wait_job(
                   id, [](const json& j) { return j["state"] == "placed"; }, "be placed")
                   .is_null());
  // Held: the Job exists, suspended, and nothing runs.
  ASSERT_TRUE(eventually([&] {
    fake_kube::KubeReply jobs = api("GET", "/apis/batch/v1/namespaces/default/jobs");
    return jobs.status == 200 && jobs.json()["items"].size() == 1 &&
           jobs.json()["items"][0]["spec"]["suspend"] == true;
  }));
  std::this_thread::sleep_for(milliseconds(1500));
  json held = get_json(url_, "/api/v1/jobs/" + std::to_string(id));
  EXPECT_EQ(held["state"], "placed") << describe_job(url_, id);
  EXPECT_TRUE(attempts(id).at(0)["running_ms"].is_null()) << describe_job(url_, id);
  // Issue 44: Kueue's reason for waiting (from the Workload) is the job's.
  EXPECT_FALSE(wait_job(
                   id,
                   [](const json& j) {
                     return j["reason"] == "queued at kube: Kueue: LocalQueue team-a doesn't exist";
                   },
                   "show Kueue's reason for waiting")
                   .is_null())
      << describe_job(url_, id);

  ASSERT_EQ(hook("/fake/queues/team-a?gpus=8").status, 200);
  json done = wait_final(id);
  ASSERT_FALSE(done.is_null());
  EXPECT_EQ(done["state"], "succeeded") << describe_job(url_, id);
  EXPECT_EQ(done["reason"], "") << "Kueue's words go once it runs";
  EXPECT_EQ(attempts(id).size(), 1u) << "admitted where it waited";
}

}  // namespace
}  // namespace orch::e2e
