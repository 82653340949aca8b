// Issue 40's acceptance line "the same workdir job on a local site and on the fake Kubernetes
// API server": `orchestrate job submit` packs and uploads a small package with its job file;
// the real server stages the archive to the Kubernetes site through its storage helper pod (a
// tar stream over pods/exec onto the claim that holds the cluster's storage.root) and to the
// local site by a plain copy. On both, the task starts in ORCH_WORKDIR after the setup ran
// there once; a second job with the same code and setup on Kubernetes runs neither the setup
// nor the code's copy again. A failed setup ends its attempt setup_failed, with its last lines.
#include <gmock/gmock.h>

#include <filesystem>
#include <memory>
#include <string>

#include "testkit/fake_kube/fake_kube_server.h"
#include "testkit/fake_kube/pod_volumes.h"
#include "testkit/fake_kube/test_pki.h"
#include "testkit/job_user.h"
#include "tests/integration/e2e/server_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class KubeWorkdirE2eTest : public ServerFixture {
 protected:
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
    o.cluster.nodes = fake_kube::uniform_nodes(1, 8);
    fake_ = std::make_unique<fake_kube::FakeKubeServer>(o);
    fake_->start();
    const std::string kubeconfig = pki_dir_->path() + "/kubeconfig";
    fake_kube::write_kubeconfig(kubeconfig, {fake_->url(), pki_.ca_cert, token_});
    // The kube cluster's storage root lies on a claim (the fake: a directory per claim, linked
    // at the mount path) that its pods and its storage helper pod both mount.
    kube_mount_ = pki_dir_->path() + "/kube-mnt/data";
    beta_root_ = pki_dir_->path() + "/beta-root";
    start_with(
        "clusters:\n"
        "  - name: kube\n"
        "    provider: kubernetes\n"
        "    nodes: 1\n    gpus_per_node: 8\n"
        "    accelerator: cpu-slot\n"
        "    peak_tflops: 0.001\n"
        "    poll_interval_ms: 100\n"
        "    storage: {root: " +
        kube_mount_ + "/orch}\n    kubernetes: {kubeconfig: " + kubeconfig +
        ", image: fake/toy, termination_grace_s: 5, volumes: [{name: data, claim: orch-data, "
        "mount: " +
        kube_mount_ +
        "}]}\n"
        "  - {name: beta, provider: local, nodes: 1, gpus_per_node: 2, accelerator: cpu-slot,\n"
        "     peak_tflops: 0.001, poll_interval_ms: 100, storage: {root: " +
        beta_root_ + "}" + testkit::local_run_as_yaml() + "}\n");
    write_project();
  }
  void before_cleanup() override {
    kill_leftover_jobs(state_);
    if (fake_) fake_->stop();
  }

  // The user's project: a small package and one job file per site (all in the tree, so every
  // job names the same code).
  void write_project() {
    project_ = dir_->path() + "/project";
    fs::create_directories(project_ + "/pkg");
    write_file(project_ + "/pkg/hello.sh", "printf 'hello from %s\\n' \"$ORCH_SITE\"\n");
    for (const char* site : {"kube", "beta"}) {
      write_file(project_ + "/" + site + ".yaml",
                 "name: wd-" + std::string(site) +
                     "\n"
                     "workdir: .\n"
                     "setup: |\n"
                     "  echo run >> setup_runs\n"
                     "command: |\n"
                     "  [ \"$(pwd -P)\" = \"$(cd \"$ORCH_WORKDIR\" && pwd -P)\" ] || exit 3\n"
                     "  sh pkg/hello.sh >> runs\n"
                     "resources: {nodes: 1, gpus_per_node: 1}\n"
                     "placement: {allowed: [" +
                     site +
                     "]}\n"
                     "restart: {max_infra_restarts: 0, max_user_restarts: 0}\n");
    }
    write_file(project_ + "/broken.yaml",
               "name: wd-broken\nworkdir: .\nsetup: |\n  echo cannot install torch\n  exit 4\n"
               "command: 'true'\nresources: {nodes: 1, gpus_per_node: 1}\n"
               "placement: {allowed: [kube]}\n"
               "restart: {max_infra_restarts: 0, max_user_restarts: 0}\n");
  }

  std::int64_t submit_project(const std::string& name) {
    return submit_file(project_ + "/" + name);
  }

  std::unique_ptr<TempDir> pki_dir_;
  fake_kube::TestPki pki_;
  std::string token_;
  std::unique_ptr<fake_kube::FakeKubeServer> fake_;
  std::string kube_mount_;
  std::string beta_root_;
  std::string project_;
};

TEST_F(KubeWorkdirE2eTest, TheSameWorkdirJobRunsOnKubernetesAndLocallySettingUpOncePerSite) {
  const std::int64_t first = submit_project("kube.yaml");
  ASSERT_GT(first, 0);
  json done = wait_final(first);
  ASSERT_EQ(done["state"], "succeeded") << describe_job(url_, first);
  const std::string hash = job(first)["spec"]["workdir"]["sha256"].get<std::string>();
  // On the claim: the tree extracted once, the setup run in it, the task started in it.
  const std::string tree =
      fake_kube::claim_dir(pki_dir_->path() + "/fake", "default", "orch-data") + "/orch/code/" +
      hash;
  EXPECT_TRUE(fs::exists(tree + "/pkg/hello.sh")) << tree;
  EXPECT_TRUE(fs::exists(tree + ".tar"));
  EXPECT_EQ(read_file(tree + "/setup_runs"), "run\n");
  EXPECT_EQ(read_file(tree + "/runs"), "hello from kube\n");
  EXPECT_EQ(code_copies_to("kube"), 1);

  // The same code and setup again: neither the copy nor the setup runs a second time.
  const std::int64_t second = submit_project("kube.yaml");
  ASSERT_GT(second, 0);
  json again = wait_final(second);
  ASSERT_EQ(again["state"], "succeeded") << describe_job(url_, second);
  EXPECT_EQ(job(second)["spec"]["workdir"]["sha256"], hash);
  EXPECT_EQ(read_file(tree + "/setup_runs"), "run\n");
  EXPECT_EQ(read_file(tree + "/runs"), "hello from kube\nhello from kube\n");
  EXPECT_EQ(code_copies_to("kube"), 1);

  // The same job on the local site: its own copy, its own setup, the same start.
  const std::int64_t local = submit_project("beta.yaml");
  ASSERT_GT(local, 0);
  json here = wait_final(local);
  ASSERT_EQ(here["state"], "succeeded") << describe_job(url_, local);
  const std::string beta_tree = beta_root_ + "/code/" + hash;
  EXPECT_EQ(read_file(beta_tree + "/setup_runs"), "run\n");
  EXPECT_EQ(read_file(beta_tree + "/runs"), "hello from beta\n");
  EXPECT_EQ(code_copies_to("beta"), 1);
}

TEST_F(KubeWorkdirE2eTest, AFailedSetupOnKubernetesEndsTheAttemptSetupFailedWithItsLastLines) {
  const std::int64_t id = submit_project("broken.yaml");
  ASSERT_GT(id, 0);
  json done = wait_final(id);
  EXPECT_EQ(done["state"], "failed") << describe_job(url_, id);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 1u) << list.dump();
  EXPECT_EQ(list[0]["cause"], "setup_failed") << list.dump();
  EXPECT_EQ(list[0]["exit_code"], 4) << list.dump();
  EXPECT_THAT(describe_job(url_, id), HasSubstr("setup failed (exit 4): cannot install torch"));
}

}  // namespace
}  // namespace orch::e2e
