// Issue 44, a Kubernetes site's storage against the fake API server in this process: copies
// through the storage helper that break for real (the fake cuts the pods/exec stream half way,
// `POST /fake/exec/cut`) and resume from what arrived, verified against the manifest; the
// storage sanity of `cluster check` (the checkpoint root on a helper volume, a ReadWriteOnce
// claim); a helper pod on a NotReady node replaced. Pods and execs run as local processes, so
// the bytes, files and hashes are real.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "adapters/kubernetes/kube_config.h"
#include "adapters/kubernetes/kube_helper_pod.h"
#include "adapters/kubernetes/kube_site.h"
#include "adapters/storage/local_storage.h"
#include "testkit/fake_kube/sandbox.h"

namespace orch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// `files` files of `size` bytes each that differ from each other (so a byte in the wrong
// place changes a hash) under `dir`; returns their total size.
std::uint64_t write_checkpoint(const std::string& dir, int files, std::size_t size) {
  fs::create_directories(dir + "/optim");
  for (int f = 0; f < files; ++f) {
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; ++i) {
      bytes[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(f) * 17 + i / 4099) % 251);
    }
    const std::string name = f % 2 == 0 ? "/shard-" : "/optim/state-";
    std::ofstream(dir + name + std::to_string(f), std::ios::binary) << bytes;
  }
  return static_cast<std::uint64_t>(files) * size;
}

// A file made wrong in place, its size kept.
void overwrite_byte(const std::string& path, std::streamoff at) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(at);
  f.put('\x7f');
}

struct QuietControl : TransferControl {
  void progress(const TransferProgress&) override {}
  double cap_bytes_per_s() override { return 0; }
  bool stop_requested() override { return false; }
};

// The two sides agree file by file, SHA-256 included: how every copy is verified.
void expect_same_manifest(const std::string& source, const std::string& copy) {
  auto a = storage::local_manifest({source, ManifestRequest::Hash::all, {}});
  auto b = storage::local_manifest({copy, ManifestRequest::Hash::all, {}});
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  const ManifestDiff diff = compare_manifest(*a, *b);
  EXPECT_TRUE(diff.matches) << diff.difference;
}

class KubeStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kube_ = std::make_unique<fake_kube::FakeKubeSandbox>("kube-storage");
    dir_ = kube_->dir();
    mount_ = dir_ + "/mnt/ckpt";
    spec_.name = "kube";
    spec_.provider = "kubernetes";
    spec_.kubernetes.kubeconfig = kube_->kubeconfig();
    spec_.kubernetes.pod.image = "fake/trainer";
    spec_.kubernetes.pod.volumes = {{"ckpt", "train-ckpt", "", mount_, false}};
    spec_.checkpoint_root = mount_;
  }
  void TearDown() override {
    site_.reset();
    kube_.reset();
  }

  KubernetesSite& site() {
    if (!site_) {
      auto target = load_kube_target(kube_->kubeconfig(), "", "");
      EXPECT_TRUE(target.ok()) << target.error().message;
      site_ = std::make_unique<KubernetesSite>(spec_, std::move(*target));
    }
    return *site_;
  }
  std::string claim() const { return kube_->claim("train-ckpt"); }
  fake_kube::KubeReply api(const std::string& method, const std::string& target,
                           const std::string& body = "") {
    return kube_->api(method, target, body);
  }
  // The next exec stream past `bytes` breaks there, for real.
  void cut_after(std::uint64_t bytes) {
    ASSERT_EQ(api("POST", "/fake/exec/cut?afterBytes=" + std::to_string(bytes)).status, 200);
  }
  TransferRequest copy(const std::string& from_cluster, const std::string& from,
                       const std::string& to_cluster, const std::string& to, std::uint64_t bytes) {
    TransferRequest r;
    r.id = 1;
    r.from = {from_cluster, from};
    r.to = {to_cluster, to};
    r.directory = true;
    r.bytes_hint = bytes;
    return r;
  }
  // A checkpoint of `files` files of `size` bytes on the claim, and its copy to this host.
  TransferRequest checkpoint_out(const std::string& step, int files, std::size_t size) {
    const std::uint64_t total = write_checkpoint(claim() + "/job/" + step, files, size);
    return copy("kube", mount_ + "/job/" + step, "beta", dir_ + "/here/" + step, total);
  }
  // The helper pod as the API shows it.
  nlohmann::json helper_pod() {
    return api("GET", "/api/v1/namespaces/default/pods/" + kube::storage_helper_name("kube"))
        .json();
  }
  std::string check_named(const std::string& name) {
    for (const auto& c : site().preflight()) {
      if (c.name == name) return std::string(c.ok ? "ok: " : "FAILED: ") + c.why;
    }
    return "no check " + name;
  }

  std::unique_ptr<fake_kube::FakeKubeSandbox> kube_;
  std::string dir_;
  std::string mount_;
  ClusterSpec spec_;
  std::unique_ptr<KubernetesSite> site_;
};

// Named kube_* so that `ctest -R kube` selects the suite.
using kube_storage = KubeStorageTest;

TEST_F(kube_storage, ACopyOutBrokenHalfWayResumesAndSendsLessThanSixtyPercentAgain) {
  TransferRequest r = checkpoint_out("step-40", 8, 512 * 1024);
  const std::uint64_t total = r.bytes_hint;
  const std::string here = r.to.path;
  QuietControl control;
  cut_after(total / 2);
  auto broken = site().copy_out(r, here, control);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().kind, ErrorKind::unreachable) << broken.error().message;

  r.checksum = true;  // as the transfer worker retries: complete files are compared by hash
  auto resumed = site().copy_out(r, here, control);
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_LT(resumed->bytes, total * 6 / 10) << "sent again: " << resumed->bytes << " of " << total;
  EXPECT_GT(resumed->bytes, total * 4 / 10) << "the half that had not arrived";
  expect_same_manifest(claim() + "/job/step-40", here);
}

TEST_F(kube_storage, ACopyInBrokenHalfWayResumesAndSendsLessThanSixtyPercentAgain) {
  const std::string here = dir_ + "/here/ds";
  const std::uint64_t total = write_checkpoint(here, 8, 512 * 1024);
  TransferRequest r = copy("beta", here, "kube", mount_ + "/datasets/ds", total);
  QuietControl control;
  cut_after(total / 2);
  auto broken = site().copy_in(r, here, control);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().kind, ErrorKind::unreachable) << broken.error().message;
  ASSERT_TRUE(fs::exists(claim() + "/datasets/ds")) << "a part arrived";

  r.checksum = true;
  auto resumed = site().copy_in(r, here, control);
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_LT(resumed->bytes, total * 6 / 10) << "sent again: " << resumed->bytes << " of " << total;
  expect_same_manifest(here, claim() + "/datasets/ds");
}

// The part that arrived is trusted only once the continued file hashes right.
TEST_F(kube_storage, AContinuedFileThatDoesNotHashRightIsSentAgainWhole) {
  const std::size_t size = 512 * 1024;
  TransferRequest r = checkpoint_out("step-50", 4, size);
  const std::string here = r.to.path;
  cut_after(r.bytes_hint / 2 + 100 * 1024);  // inside the third file
  QuietControl control;
  ASSERT_FALSE(site().copy_out(r, here, control).ok());
  std::string partial;
  std::uint64_t missing = 0;
  for (const auto& e : fs::recursive_directory_iterator(here)) {
    if (!e.is_regular_file()) continue;
    missing += size - e.file_size();
    if (e.file_size() > 0 && e.file_size() < size) partial = e.path().string();
  }
  ASSERT_FALSE(partial.empty()) << "the stream broke inside a file";
  overwrite_byte(partial, 10);  // the part that arrived is wrong, its size right
  auto resumed = site().copy_out(r, here, control);
  ASSERT_TRUE(resumed.ok()) << resumed.error().message;
  EXPECT_GE(resumed->bytes, missing + size) << "the bad file went again, whole";
  expect_same_manifest(claim() + "/job/step-50", here);
}

// Like rsync: a complete copy sends nothing; a retry compares checksums and sends again
// exactly the file that differs.
TEST_F(kube_storage, ACompleteCopySendsNothingAndARetrySendsOnlyTheFileWhoseHashDiffers) {
  const std::size_t size = 256 * 1024;
  TransferRequest r = checkpoint_out("step-60", 4, size);
  const std::string here = r.to.path;
  QuietControl control;
  ASSERT_TRUE(site().copy_out(r, here, control).ok());
  auto again = site().copy_out(r, here, control);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->bytes, 0U);

  overwrite_byte(here + "/shard-2", 1000);
  r.checksum = true;
  auto retried = site().copy_out(r, here, control);
  ASSERT_TRUE(retried.ok()) << retried.error().message;
  EXPECT_GE(retried->bytes, size);
  EXPECT_LT(retried->bytes, 2 * size);
  expect_same_manifest(claim() + "/job/step-60", here);
}

TEST_F(kube_storage, AStorageHelperOnANotReadyNodeIsReplaced) {
  fs::create_directories(claim() + "/job");
  ASSERT_TRUE(site().manifest({mount_ + "/job", ManifestRequest::Hash::none, {}}).ok());
  const nlohmann::json first = helper_pod();
  const std::string node = first["spec"]["nodeName"];
  ASSERT_FALSE(node.empty());

  ASSERT_EQ(api("POST", "/fake/nodes/" + node + "/notready?keepPods=true").status, 200);
  ASSERT_TRUE(site().inventory().ok());
  auto listed = site().manifest({mount_ + "/job", ManifestRequest::Hash::none, {}});
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  const nlohmann::json second = helper_pod();
  EXPECT_NE(second["metadata"]["uid"], first["metadata"]["uid"]) << "a new helper pod";
  EXPECT_NE(second["spec"]["nodeName"], node) << "on a Ready node";
  EXPECT_EQ(second["status"]["phase"], "Running");
}

TEST_F(kube_storage, ClusterCheckWarnsWhenTheCheckpointRootIsOnNoHelperVolume) {
  spec_.checkpoint_root = "/elsewhere/ckpt";
  const std::string line = check_named("checkpoint-volume");
  EXPECT_THAT(line, StartsWith("ok: warning: "));
  EXPECT_THAT(line, HasSubstr("/elsewhere/ckpt is on none of the volumes the storage helper"));
  EXPECT_THAT(line, HasSubstr(mount_));
}

TEST_F(kube_storage, ClusterCheckWarnsWhenTheCheckpointClaimIsReadWriteOnce) {
  const auto made = api("POST", "/api/v1/namespaces/default/persistentvolumeclaims",
                        R"({"metadata":{"name":"train-ckpt"},"spec":{"accessModes":
                        ["ReadWriteOnce"],"resources":{"requests":{"storage":"10Gi"}}}})");
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string line = check_named("checkpoint-volume");
  EXPECT_THAT(line, StartsWith("ok: warning: "));
  EXPECT_THAT(line, HasSubstr("claim train-ckpt"));
  EXPECT_THAT(line, HasSubstr("ReadWriteOnce"));
  EXPECT_THAT(line, HasSubstr("ReadWriteMany"));
}

// The verbs this cluster's settings add to what cluster check asks RBAC for: the claim's access
// modes (a volume here is a claim) and, with a Kueue queue, the Jobs' Workloads.
TEST_F(kube_storage, ClusterCheckAsksRbacForTheClaimsAndWithAQueueForTheWorkloads) {
  ASSERT_EQ(api("POST", "/fake/forbid?verb=get&resource=persistentvolumeclaims").status, 200);
  EXPECT_THAT(check_named("rbac"), HasSubstr("FAILED: the credentials may not get "
                                             "persistentvolumeclaims in namespace default"));
  ASSERT_EQ(api("DELETE", "/fake/forbid").status, 200);

  ASSERT_EQ(api("POST", "/fake/forbid?verb=list&resource=workloads").status, 200);
  EXPECT_EQ(check_named("rbac"), "ok: every verb orchestrate uses is allowed");  // no queue
  site_.reset();
  spec_.kubernetes.queue = "team-a";
  EXPECT_THAT(check_named("rbac"), HasSubstr("may not list workloads in namespace default"));
}

TEST_F(kube_storage, ClusterCheckPassesACheckpointRootOnAReadWriteManyClaim) {
  const auto made = api("POST", "/api/v1/namespaces/default/persistentvolumeclaims",
                        R"({"metadata":{"name":"train-ckpt"},"spec":{"accessModes":
                        ["ReadWriteMany"],"resources":{"requests":{"storage":"10Gi"}}}})");
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(check_named("checkpoint-volume"),
            "ok: " + mount_ + " is on claim train-ckpt (ReadWriteMany), volume ckpt");

  ASSERT_EQ(api("DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/train-ckpt").status,
            200);
  const std::string line = check_named("checkpoint-volume");
  EXPECT_THAT(line, StartsWith("ok: warning: "));
  EXPECT_THAT(line, HasSubstr("claim train-ckpt is not in namespace default"));
}

}  // namespace
}  // namespace orch
