// KubernetesSite against the fake API server in this process (issue 20): exec credential
// plugins whose tokens expire, storage listed, hashed, deleted and copied through the storage
// helper pod, Kueue's admission, and burn-in probe pods. Pods run as local processes, so the
// files, hashes and probe results are real.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "adapters/kubernetes/kube_config.h"
#include "adapters/kubernetes/kube_site.h"
#include "scheduler/common/base64.h"
#include "server/site_transfer_port.h"
#include "testkit/fake_kube/sandbox.h"

namespace orch {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

void write_file(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Copies report here; nothing stops them.
struct QuietControl : TransferControl {
  void progress(const TransferProgress& p) override { last = p; }
  double cap_bytes_per_s() override { return 0; }
  bool stop_requested() override { return false; }
  TransferProgress last;
};

// A directory copied between two clusters' paths.
TransferRequest directory_copy(std::int64_t id, TransferEndpoint from, TransferEndpoint to) {
  TransferRequest r;
  r.id = id;
  r.from = std::move(from);
  r.to = std::move(to);
  r.directory = true;
  return r;
}

// One attempt of job 5 (token, command, GPUs on one node).
LaunchRequest attempt(const std::string& token, const std::string& command, int gpus) {
  LaunchRequest r;
  r.token = token;
  r.job_id = 5;
  r.attempt_no = 1;
  r.command = command;
  r.gpus_per_node = gpus;
  return r;
}

template <typename Pred>
bool eventually(Pred pred, milliseconds limit = milliseconds(20000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return pred();
}

class KubeSiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kube_ = std::make_unique<fake_kube::FakeKubeSandbox>("kube-site", nodes());
    dir_ = kube_->dir();
    pki_ = kube_->pki();
    token_ = kube_->token();
    fake_ = &kube_->server();
    kubeconfig_ = kube_->kubeconfig();
    mount_ = dir_ + "/mnt/ckpt";
    spec_.name = "kube";
    spec_.provider = "kubernetes";
    spec_.kubernetes.kubeconfig = kubeconfig_;
    spec_.kubernetes.pod.image = "fake/trainer";
    spec_.kubernetes.termination_grace_s = 2;
    spec_.kubernetes.pod.volumes = {{"ckpt", "train-ckpt", "", mount_, false}};
    spec_.kubernetes.agent = ORCH_BIN_DIR "/orchestrate-agent";
    spec_.checkpoint_root = mount_;
  }
  void TearDown() override {
    site_.reset();
    kube_.reset();
  }
  virtual std::vector<fake_kube::NodeConfig> nodes() const {
    return fake_kube::uniform_nodes(2, 8);
  }

  KubernetesSite& site() {
    if (!site_) {
      auto target = load_kube_target(kubeconfig_, "", "");
      EXPECT_TRUE(target.ok()) << target.error().message;
      site_ = std::make_unique<KubernetesSite>(spec_, std::move(*target));
    }
    return *site_;
  }
  // The claim's directory inside the fake (what the volume holds).
  std::string claim() const { return kube_->claim("train-ckpt"); }

  fake_kube::KubeReply api(const std::string& method, const std::string& target) {
    return kube_->api(method, target);
  }

  std::string dir_;
  fake_kube::TestPki pki_;
  std::string token_;
  std::string kubeconfig_;
  std::string mount_;
  ClusterSpec spec_;
  std::unique_ptr<fake_kube::FakeKubeSandbox> kube_;
  fake_kube::FakeKubeServer* fake_ = nullptr;  // the sandbox's
  std::unique_ptr<KubernetesSite> site_;
};

// Named kube_* so that `ctest -R kube` selects the suite.
using kube_site = KubeSiteTest;

TEST_F(kube_site, AnExecPluginsTokenIsRefreshedWhenTheServerSaysItExpired) {
  // The plugin prints whatever token the test left in credential.json and counts its runs.
  write_file(dir_ + "/plugin.sh",
             "#!/bin/sh\necho run >> '" + dir_ + "/runs'\ncat '" + dir_ + "/credential.json'\n");
  ::chmod((dir_ + "/plugin.sh").c_str(), 0755);
  const auto issue = [&](const std::string& token, int ttl_s) {
    fake_->accept_token(token, std::chrono::system_clock::now() + std::chrono::seconds(ttl_s));
    write_file(dir_ + "/credential.json",
               R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",)"
               R"("status":{"token":")" +
                   token + "\"}}");
  };
  write_file(kubeconfig_,
             "apiVersion: v1\nkind: Config\nclusters: [{name: fake, cluster: {server: \"" +
                 fake_->url() + "\", certificate-authority: " + pki_.ca_cert +
                 "}}]\nusers: [{name: sso, user: {exec: {apiVersion: "
                 "client.authentication.k8s.io/v1beta1, command: " +
                 dir_ +
                 "/plugin.sh}}}]\ncontexts: [{name: c, context: {cluster: fake, user: "
                 "sso}}]\ncurrent-context: c\n");
  // The plugin says nothing of expiry: the server's 401 is what makes it run again.
  issue("first-token", 3);
  auto inv = site().inventory();
  ASSERT_TRUE(inv.ok()) << inv.error().message;
  EXPECT_EQ(inv->nodes.size(), 2U);
  std::this_thread::sleep_for(milliseconds(3200));
  issue("second-token", 60);
  inv = site().inventory();
  ASSERT_TRUE(inv.ok()) << inv.error().message;
  EXPECT_GE(fake_->unauthorized(), 1);
  const std::string runs = read_file(dir_ + "/runs");
  // Once at the start and again after the 401 (the pod watch may have asked once more in
  // between, and been refused too).
  EXPECT_GE(std::count(runs.begin(), runs.end(), '\n'), 2) << runs;

  // A plugin that fails: its message reaches the caller, the site reads as silent.
  write_file(dir_ + "/plugin.sh",
             "#!/bin/sh\necho 'token expired; run: login --sso' >&2\nexit 1\n");
  fake_->accept_token("second-token", std::chrono::system_clock::now());
  auto failed = site().inventory();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(failed.error().message, HasSubstr("token expired; run: login --sso"));
}

TEST_F(kube_site, CheckpointsOnTheClaimAreListedHashedAndDeletedInTheHelperPod) {
  write_file(claim() + "/job/step-10/model.pt", "weights");
  write_file(claim() + "/job/step-10/opt.pt", "state");
  auto m = site().manifest({mount_ + "/job/step-10", ManifestRequest::Hash::all, {}});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->directory);
  ASSERT_EQ(m->files.size(), 2U);
  EXPECT_EQ(m->files[0].path, "model.pt");
  EXPECT_EQ(m->files[0].size, 7U);
  EXPECT_EQ(m->files[0].sha256,  // sha256("weights")
            "9a129038d9a00aed0cf6a7ea059ca50a813449061ab87848cf1a13eafdf33b2c");

  auto missing = site().manifest({mount_ + "/job/step-99", ManifestRequest::Hash::none, {}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);

  // Confined to the job's directory: a link out of it is neither listed nor deleted.
  write_file(claim() + "/other/step-5/model.pt", "theirs");
  fs::create_directory_symlink(claim() + "/other/step-5", claim() + "/job/step-5");
  auto out =
      site().manifest({mount_ + "/job/step-5", ManifestRequest::Hash::all, {}, mount_ + "/job"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::forbidden) << out.error().message;
  auto kept = site().remove_path({mount_ + "/job/step-5", mount_ + "/job"});
  ASSERT_FALSE(kept.ok());
  EXPECT_EQ(kept.error().kind, ErrorKind::forbidden) << kept.error().message;
  EXPECT_TRUE(fs::exists(claim() + "/other/step-5/model.pt"));

  ASSERT_TRUE(site().remove_path({mount_ + "/job/step-10", mount_ + "/job"}).ok());
  EXPECT_FALSE(fs::exists(claim() + "/job/step-10"));
  EXPECT_TRUE(site().remove_path({mount_ + "/job/step-10", mount_ + "/job"}).ok())
      << "deleting twice is fine";
  auto refused = site().remove_path({"/", mount_ + "/job"});
  EXPECT_FALSE(refused.ok());

  // One helper pod served all of it, labelled as orchestrate's helper.
  auto pods = api("GET", "/api/v1/namespaces/default/pods?labelSelector=orchestrate.dev%2Fhelper");
  ASSERT_EQ(pods.status, 200) << pods.body;
  EXPECT_EQ(pods.json()["items"].size(), 1U) << pods.body;
}

TEST_F(kube_site, CopiesTravelAsTarStreamsThroughTheHelperPod) {
  write_file(claim() + "/job/step-20/model.pt", std::string(300000, 'w'));
  write_file(claim() + "/job/step-20/sub/opt.pt", "optimizer");
  QuietControl control;
  const TransferRequest out =
      directory_copy(1, {"kube", mount_ + "/job/step-20"}, {"beta", dir_ + "/beta/job/step-20"});
  auto pulled = site().copy_out(out, out.to.path, control);
  ASSERT_TRUE(pulled.ok()) << pulled.error().message;
  EXPECT_EQ(read_file(dir_ + "/beta/job/step-20/model.pt"), std::string(300000, 'w'));
  EXPECT_EQ(read_file(dir_ + "/beta/job/step-20/sub/opt.pt"), "optimizer");
  EXPECT_GE(pulled->bytes, 300000U);
  EXPECT_THAT(pulled->route, HasSubstr("pods/exec"));

  const TransferRequest in =
      directory_copy(2, {"beta", dir_ + "/beta/job/step-20"}, {"kube", mount_ + "/job/restored"});
  auto pushed = site().copy_in(in, in.from.path, control);
  ASSERT_TRUE(pushed.ok()) << pushed.error().message;
  EXPECT_EQ(read_file(claim() + "/job/restored/sub/opt.pt"), "optimizer");
  EXPECT_EQ(read_file(claim() + "/job/restored/model.pt"), std::string(300000, 'w'));

  TransferRequest gone = out;
  gone.from.path = mount_ + "/job/no-such";
  auto failed = site().copy_out(gone, dir_ + "/beta/x", control);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::io);
  EXPECT_THAT(failed.error().message, HasSubstr("no-such"));
}

// The server's transfer port: a local site's copy goes straight in, and a copy between two
// Kubernetes sites is relayed through this host (and the relay folder removed).
TEST_F(kube_site, TheServersTransferPortRoutesKubernetesCopies) {
  write_file(claim() + "/job/step-30/model.pt", "thirty");
  ClusterSpec beta;
  beta.name = "beta";
  beta.provider = "local";
  beta.storage_root = dir_ + "/beta";
  ClusterSpec other = spec_;
  other.name = "kube2";
  SiteTransferPort port({spec_, other, beta}, dir_ + "/transfers");
  auto target = load_kube_target(kubeconfig_, "", "");
  ASSERT_TRUE(target.ok());
  KubernetesSite second(other, *target);
  port.site_joined(spec_, &site());
  port.site_joined(other, &second);
  port.site_joined(beta, nullptr);
  QuietControl control;
  const TransferRequest relayed = directory_copy(9, {"kube", mount_ + "/job/step-30"},
                                                 {"kube2", mount_ + "/replicas/job/step-30"});
  auto done = port.run(relayed, control);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_THAT(done->route, HasSubstr("relay via orchestrator"));
  EXPECT_EQ(read_file(claim() + "/replicas/job/step-30/model.pt"), "thirty");
  EXPECT_FALSE(fs::exists(dir_ + "/transfers/relay/9"));

  write_file(dir_ + "/beta/ds/part-0", "data");
  auto staged = port.run(
      directory_copy(10, {"beta", dir_ + "/beta/ds"}, {"kube", mount_ + "/datasets/ds"}), control);
  ASSERT_TRUE(staged.ok()) << staged.error().message;
  EXPECT_EQ(read_file(claim() + "/datasets/ds/part-0"), "data");
}

TEST_F(kube_site, WithALocalQueueAnAttemptIsQueuedUntilKueueAdmitsIt) {
  spec_.kubernetes.queue = "team-a";
  const LaunchRequest r = attempt("orch-5-1-queued", "echo admitted", 4);
  auto launched = site().launch(r);
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  // The queue has no quota yet: Kueue keeps the Job suspended, so no pod is created.
  std::this_thread::sleep_for(milliseconds(300));
  auto obs = site().observe(r.token, 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  EXPECT_EQ(obs->phase, RunPhase::queued);
  auto job = api("GET", "/apis/batch/v1/namespaces/default/jobs/" + r.token);
  ASSERT_EQ(job.status, 200);
  EXPECT_EQ(job.json()["spec"]["suspend"], true);
  EXPECT_EQ(job.json()["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "team-a");

  // Too small a quota admits nothing; enough admits it and it runs to its end.
  ASSERT_EQ(api("POST", "/fake/queues/team-a?gpus=2").status, 200);
  // Kueue's reason for waiting, from the Workload, is the site's (the job's reason, issue 44).
  ASSERT_TRUE(eventually([&] {
    obs = site().observe(r.token, 0);
    return obs.ok() && obs->waiting.find("more needed") != std::string::npos;
  })) << (obs.ok() ? obs->waiting : obs.error().message);
  EXPECT_EQ(obs->phase, RunPhase::queued);
  EXPECT_EQ(obs->waiting,
            "Kueue: couldn't assign flavors to pod set main: insufficient unused quota for "
            "nvidia.com/gpu in flavor default-flavor, 2 more needed");
  ASSERT_EQ(api("POST", "/fake/queues/team-a?gpus=8").status, 200);
  ASSERT_TRUE(eventually([&] {
    auto o = site().observe(r.token, 0);
    return o.ok() && o->phase == RunPhase::exited;
  }));
  obs = site().observe(r.token, 0);
  ASSERT_TRUE(obs.ok());
  ASSERT_TRUE(obs->exit.has_value());
  EXPECT_EQ(obs->exit->exit_code, 0);
}

// Kueue preempts by suspending a Job that runs: the attempt ends as preempted (and its Job is
// deleted), so that the next attempt resumes from the newest checkpoint. Issue 44: read from the
// Job's Workload (Evicted, reason Preempted), so a site that never saw the Job run (the server
// restarted in between) reads it preempted too.
TEST_F(kube_site, AJobKueuePreemptsIsPreemptedEvenForASiteThatNeverSawItRun) {
  spec_.kubernetes.queue = "team-a";
  ASSERT_EQ(api("POST", "/fake/queues/team-a?gpus=8").status, 200);
  const LaunchRequest r = attempt("orch-5-2-preempted", "sleep 60", 4);
  ASSERT_TRUE(site().launch(r).ok());
  ASSERT_TRUE(eventually([&] {
    auto o = site().observe(r.token, 0);
    return o.ok() && o->phase == RunPhase::running;
  }));
  ASSERT_EQ(api("POST", "/fake/queues/team-a?gpus=0").status, 200);
  ASSERT_EQ(api("POST", "/fake/namespaces/default/jobs/" + r.token + "/suspend").status, 200);
  const std::string uid =
      api("GET", "/apis/batch/v1/namespaces/default/jobs/" + r.token).json()["metadata"]["uid"];
  const auto listed = api("GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads?" +
                                     ("labelSelector=kueue.x-k8s.io%2Fjob-uid%3D" + uid));
  ASSERT_EQ(listed.json()["items"].size(), 1U) << listed.body;
  EXPECT_THAT(listed.json()["items"][0]["metadata"]["name"].get<std::string>(),
              HasSubstr("job-" + r.token + "-"));
  site_.reset();  // a new process: it never saw the Job run
  Result<RunObservation> obs = make_error(ErrorKind::internal, "not observed");
  ASSERT_TRUE(eventually([&] {
    obs = site().observe(r.token, 0);
    return obs.ok() && obs->phase == RunPhase::exited;
  }));
  ASSERT_TRUE(obs->exit.has_value());
  EXPECT_EQ(obs->exit->cause, ExitCause::preempted);
  EXPECT_THAT(obs->exit->detail, HasSubstr("Preempted to accommodate a workload"));
  ASSERT_TRUE(eventually([&] {
    return api("GET", "/apis/batch/v1/namespaces/default/jobs/" + r.token).status == 404;
  }));
}

// Kueue says on the Workload why it waits; without the Workload API (403 here, 404 where Kueue
// is not installed) the site reads the suspended Job as before: queued.
TEST_F(kube_site, WithoutTheWorkloadApiOnlyWhatTheSiteSawCounts) {
  spec_.kubernetes.queue = "team-b";  // no such LocalQueue: Kueue says so on the Workload
  const LaunchRequest r = attempt("orch-5-4-waiting", "sleep 60", 4);
  ASSERT_TRUE(site().launch(r).ok());
  ASSERT_TRUE(eventually([&] {
    const auto w = api("GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads");
    return w.status == 200 && w.json()["items"].size() == 1U &&
           w.json()["items"][0]["status"]["conditions"][0]["message"] ==
               "LocalQueue team-b doesn't exist";
  }));
  auto obs = site().observe(r.token, 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  EXPECT_EQ(obs->waiting, "Kueue: LocalQueue team-b doesn't exist");
  ASSERT_EQ(api("POST", "/fake/forbid?verb=list&resource=workloads").status, 200);
  obs = site().observe(r.token, 0);
  ASSERT_TRUE(obs.ok()) << obs.error().message;
  EXPECT_EQ(obs->phase, RunPhase::queued);
  EXPECT_EQ(obs->waiting,
            "the Job " + r.token + " waits for Kueue to admit it (LocalQueue team-b)");
}

TEST_F(kube_site, AJobsOwnPodSettingsReachItsPod) {
  spec_.kubernetes.pod.image_pull_secrets = {"registry"};
  LaunchRequest r =
      attempt("orch-6-1-settings",
              "test -L /dev/shm -o -d /dev/shm && echo saved > " + mount_ + "/from-the-job", 1);
  r.pod.image = "fake/own-image:1";
  r.pod.shm_size = "2Gi";
  r.pod.node_selector = {{"kubernetes.io/hostname", "node-1"}};
  auto launched = site().launch(r);
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  ASSERT_TRUE(eventually([&] {
    auto o = site().observe(r.token, 0);
    return o.ok() && o->phase == RunPhase::exited;
  }));
  auto obs = site().observe(r.token, 0);
  ASSERT_TRUE(obs.ok() && obs->exit.has_value());
  EXPECT_EQ(obs->exit->exit_code, 0) << obs->exit->detail;
  EXPECT_EQ(obs->nodes, std::vector<std::string>{"node-1"});
  // The file the job wrote is in the claim, where every pod of the claim sees it.
  EXPECT_EQ(read_file(claim() + "/from-the-job"), "saved\n");
  auto pods = api(
      "GET", "/api/v1/namespaces/default/pods?labelSelector=orchestrate.dev%2Ftoken%3D" + r.token);
  ASSERT_EQ(pods.status, 200);
  const auto pod = pods.json()["items"].at(0);
  EXPECT_EQ(pod["spec"]["containers"][0]["image"], "fake/own-image:1");
  EXPECT_EQ(pod["spec"]["imagePullSecrets"][0]["name"], "registry");
  EXPECT_NE(pod["spec"]["volumes"].dump().find("\"sizeLimit\":\"2Gi\""), std::string::npos);

  // A job may not mount a node's directory unless the cluster allows it.
  LaunchRequest host = r;
  host.token = "orch-6-2-host";
  host.pod.volumes = {{"data", "", "/srv/data", "/data", true}};
  auto refused = site().launch(host);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("allow_host_path"));
}

// Issue 37: a job's secret_env reaches its process through a Secret of the attempt that its Job
// owns; the Job as the API server keeps it holds no value, and cancel takes the Secret away
// itself (the cluster's garbage collector is off here).
TEST_F(kube_site, SecretValuesReachThePodThroughASecretOwnedByTheJob) {
  ASSERT_EQ(api("POST", "/fake/gc?enabled=false").status, 200);
  const std::string value = "hf_$(HOME)$$ secret";
  LaunchRequest r =
      attempt("orch-7-1-secret", "printf '%s\\n' \"$HF_TOKEN\" > " + mount_ + "/seen; sleep 60", 1);
  r.secret_env = {{"HF_TOKEN", value}};
  auto launched = site().launch(r);
  ASSERT_TRUE(launched.ok()) << launched.error().message;
  EXPECT_FALSE(launched->adopted);
  ASSERT_TRUE(eventually([&] { return read_file(claim() + "/seen") == value + "\n"; }))
      << read_file(claim() + "/seen");

  const std::string secret_path = "/api/v1/namespaces/default/secrets/orch-7-1-secret-secret";
  auto job = api("GET", "/apis/batch/v1/namespaces/default/jobs/" + r.token);
  ASSERT_EQ(job.status, 200) << job.body;
  EXPECT_THAT(job.body, Not(HasSubstr("hf_"))) << "no value, escaped or not";
  EXPECT_THAT(job.body, Not(HasSubstr(encode_base64(value))));
  EXPECT_THAT(job.body, HasSubstr(R"({"name":"HF_TOKEN","valueFrom":{"secretKeyRef":)"
                                  R"({"key":"HF_TOKEN","name":"orch-7-1-secret-secret"}}})"));
  auto secret = api("GET", secret_path);
  ASSERT_EQ(secret.status, 200) << secret.body;
  const auto owner = secret.json()["metadata"]["ownerReferences"];
  ASSERT_EQ(owner.size(), 1u) << secret.body;
  EXPECT_EQ(owner[0]["kind"], "Job");
  EXPECT_EQ(owner[0]["name"], r.token);
  EXPECT_EQ(owner[0]["uid"], job.json()["metadata"]["uid"]);
  EXPECT_EQ(owner[0]["controller"], false);
  EXPECT_EQ(secret.json()["metadata"]["labels"]["orchestrate.dev/token"], r.token);

  // A retried launch (the server restarted) adopts the Job and keeps its Secret owned by it.
  auto again = site().launch(r);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->adopted);
  EXPECT_EQ(api("GET", secret_path).json()["metadata"]["ownerReferences"][0]["uid"],
            job.json()["metadata"]["uid"]);

  ASSERT_TRUE(site().cancel(r.token).ok());
  EXPECT_EQ(api("GET", secret_path).status, 404) << "deleted by cancel, not by the GC";
  EXPECT_TRUE(eventually([&] {
    return api("GET", "/apis/batch/v1/namespaces/default/jobs/" + r.token).status == 404;
  }));
}

// An attempt that ends by itself keeps its Job (for its status) but not its Secret.
TEST_F(kube_site, AnEndedAttemptsSecretIsDeleted) {
  LaunchRequest r = attempt("orch-7-2-ends", "test -n \"$WANDB_API_KEY\"", 1);
  r.secret_env = {{"WANDB_API_KEY", "wandb-key"}};
  ASSERT_TRUE(site().launch(r).ok());
  Result<RunObservation> obs = make_error(ErrorKind::internal, "not observed");
  ASSERT_TRUE(eventually([&] {
    obs = site().observe(r.token, 0);
    return obs.ok() && obs->phase == RunPhase::exited;
  }));
  ASSERT_TRUE(obs->exit.has_value());
  EXPECT_EQ(obs->exit->exit_code, 0) << obs->exit->detail;
  EXPECT_EQ(api("GET", "/api/v1/namespaces/default/secrets/orch-7-2-ends-secret").status, 404);
  EXPECT_EQ(api("GET", "/apis/batch/v1/namespaces/default/jobs/" + r.token).status, 200);
}

// Credentials that may not create or patch Secrets: the launch fails saying which RBAC verbs
// are missing, and leaves nothing behind.
TEST_F(kube_site, ALaunchThatMayNotCreateOrPatchSecretsSaysWhichVerbsItNeeds) {
  LaunchRequest r = attempt("orch-7-3-rbac", "sleep 60", 1);
  r.secret_env = {{"HF_TOKEN", "hf_rbac_value"}};
  ASSERT_EQ(api("POST", "/fake/forbid?verb=create&resource=secrets").status, 200);
  auto refused = site().launch(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::forbidden);
  EXPECT_THAT(refused.error().message, HasSubstr("namespace default"));
  EXPECT_THAT(refused.error().message, HasSubstr("`create secrets`"));
  EXPECT_THAT(refused.error().message, HasSubstr("`patch secrets`"));
  EXPECT_THAT(refused.error().message, Not(HasSubstr("hf_rbac_value")));
  EXPECT_EQ(api("GET", "/apis/batch/v1/namespaces/default/jobs/" + r.token).status, 404);

  // Created but not patched: the new Job and its Secret are taken back.
  ASSERT_EQ(api("DELETE", "/fake/forbid").status, 200);
  ASSERT_EQ(api("POST", "/fake/forbid?verb=patch&resource=secrets").status, 200);
  refused = site().launch(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::forbidden);
  EXPECT_THAT(refused.error().message, HasSubstr("to patch the Secret orch-7-3-rbac-secret"));
  EXPECT_EQ(api("GET", "/api/v1/namespaces/default/secrets/orch-7-3-rbac-secret").status, 404);
  EXPECT_TRUE(eventually([&] {
    return api("GET", "/apis/batch/v1/namespaces/default/jobs/" + r.token).status == 404;
  }));
}

// Three nodes, one of them slow (the fake runs its pods at a fifth of the CPU).
class KubeBurnInTest : public KubeSiteTest {
 protected:
  std::vector<fake_kube::NodeConfig> nodes() const override {
    auto n = fake_kube::uniform_nodes(3, 8);
    n[2].cpu_share = 0.2;
    return n;
  }
};
using kube_burn_in = KubeBurnInTest;

TEST_F(kube_burn_in, ProbePodsRunOnePerNodeAndTheSlowNodeShowsIt) {
  ProbeRequest r;
  r.token = "orch-burnin-kube-1";
  r.io_bytes = 1 << 20;
  r.compute_s = 1;
  r.timeout_s = 60;
  auto results = site().probe_nodes(r);
  ASSERT_TRUE(results.ok()) << results.error().message;
  ASSERT_EQ(results->size(), 3U);
  double slow = 0;
  double fastest = 0;
  for (const auto& p : *results) {
    ASSERT_TRUE(p.gemm_gflops.has_value()) << p.node;
    if (p.node == "node-2") slow = *p.gemm_gflops;
    fastest = std::max(fastest, *p.gemm_gflops);
  }
  EXPECT_LT(slow, 0.5 * fastest) << "node-2 runs at a fifth of the CPU";
  // The probe pods are gone afterwards.
  ASSERT_TRUE(eventually([&] {
    auto pods = api(
        "GET", "/api/v1/namespaces/default/pods?labelSelector=orchestrate.dev%2Fhelper%3Dprobe");
    return pods.status == 200 && pods.json()["items"].empty();
  }));
}

// `orchestrate cluster check` (issue 40): the credentials work, the namespace is there, and one
// SelfSubjectAccessReview per verb the adapter uses says each is allowed; a verb taken away is
// named, and so is a namespace that does not exist.
TEST_F(kube_site, ThePreflightAsksRbacForEveryVerbAndNamesWhatIsMissing) {
  auto checks = site().preflight();
  std::string lines;
  for (const auto& c : checks) lines += preflight_line(c) + "\n";
  EXPECT_EQ(first_failure(checks), nullptr) << lines;
  EXPECT_THAT(lines, HasSubstr("every verb orchestrate uses is allowed"));

  ASSERT_EQ(api("POST", "/fake/forbid?verb=delete&resource=jobs").status, 200);
  checks = site().preflight();
  ASSERT_NE(first_failure(checks), nullptr);
  EXPECT_EQ(first_failure(checks)->name, "rbac");
  EXPECT_THAT(first_failure(checks)->why, HasSubstr("may not delete jobs in namespace default"));
  ASSERT_EQ(api("DELETE", "/fake/forbid").status, 200);

  auto target = load_kube_target(kubeconfig_, "", "nowhere");
  ASSERT_TRUE(target.ok()) << target.error().message;
  KubernetesSite elsewhere(spec_, std::move(*target));
  checks = elsewhere.preflight();
  ASSERT_NE(first_failure(checks), nullptr);
  EXPECT_EQ(first_failure(checks)->name, "namespace");
  EXPECT_THAT(first_failure(checks)->why, HasSubstr("namespace nowhere is not there"));
}

}  // namespace
}  // namespace orch
