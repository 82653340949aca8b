// The real kubectl against the fake API server: discovery, server-side printing, create with
// the default (strict) validation, get -o json, logs and delete must all just work.

#include <gmock/gmock.h>

#include <filesystem>
#include <thread>

#include "tests/integration/fake_kube/fake_kube_fixture.h"

namespace orch::fake_kube::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kJobYaml = R"(apiVersion: batch/v1
kind: Job
metadata:
  name: hello
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["/bin/sh", "-c", "echo hello; sleep 1"]
)";

class KubectlTest : public FakeKubeTest {};

TEST_F(KubectlTest, GetNodesListsEveryNodeWithItsStatus) {
  nodes = uniform_nodes(2, 8);
  nodes[1].ready = false;
  start_server();
  const auto r = kubectl({"get", "nodes"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("NAME"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("node-0 +Ready +<none> +[0-9]+s +v1\\.32\\.0"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("node-1 +NotReady"));

  const auto j = kubectl({"get", "nodes", "-o", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.output;
  json list = json::parse(j.output);
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0]["status"]["allocatable"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(list["items"][0]["metadata"]["labels"]["nvidia.com/gpu.product"],
            "NVIDIA-H100-80GB-HBM3");
}

TEST_F(KubectlTest, CreateGetLogsAndDeleteAJob) {
  start_server();
  const std::string job_file = dir_.path() + "/job.yaml";
  e2e::write_file(job_file, kJobYaml);

  const auto created = kubectl({"create", "-f", job_file});
  ASSERT_EQ(created.exit_code, 0) << created.output;
  EXPECT_THAT(created.output, HasSubstr("job.batch/hello created"));

  json jobs;
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  for (;;) {
    const auto got = kubectl({"get", "jobs", "-o", "json"});
    ASSERT_EQ(got.exit_code, 0) << got.output;
    jobs = json::parse(got.output);
    ASSERT_EQ(jobs["items"].size(), 1u) << got.output;
    EXPECT_EQ(jobs["items"][0]["metadata"]["name"], "hello");
    if (jobs["items"][0]["status"].value("succeeded", 0) == 1) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "never succeeded: " << got.output;
    std::this_thread::sleep_for(300ms);
  }
  json& status = jobs["items"][0]["status"];
  EXPECT_EQ(last_condition(jobs["items"][0])["type"], "Complete");
  EXPECT_TRUE(status.contains("completionTime"));

  const auto table = kubectl({"get", "jobs"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, ::testing::ContainsRegex("hello +Complete +1/1"));

  const auto logs = kubectl({"logs", "job/hello"});
  ASSERT_EQ(logs.exit_code, 0) << logs.output;
  EXPECT_EQ(logs.output, "hello\n");

  json pods = job_pods("hello");
  ASSERT_EQ(pods.size(), 1u);
  const std::string pod = pods[0]["metadata"]["name"];
  const auto pod_logs = kubectl({"logs", pod});
  ASSERT_EQ(pod_logs.exit_code, 0) << pod_logs.output;
  EXPECT_EQ(pod_logs.output, "hello\n");
  const auto get_pods = kubectl({"get", "pods"});
  EXPECT_THAT(get_pods.output, ::testing::ContainsRegex(pod + " +0/1 +Completed"));

  const auto deleted = kubectl({"delete", "job", "hello"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.output;
  EXPECT_THAT(deleted.output, HasSubstr("job.batch \"hello\" deleted"));
  // Background propagation: the pod goes too.
  wait_for("/api/v1/namespaces/default/pods", [](const json& l) { return l["items"].empty(); });
  const auto none = kubectl({"get", "jobs"});
  EXPECT_EQ(none.exit_code, 0) << none.output;
  EXPECT_THAT(none.output, HasSubstr("No resources found in default namespace."));
}

// pods/exec over WebSocket (issue 20: orchestrate's storage helper uses it): kubectl exec with
// stdin and exit codes, and kubectl cp both ways (tar through exec).
TEST_F(KubectlTest, ExecAndCpReachARunningPod) {
  start_server();
  const std::string pod_file = dir_.path() + "/pod.yaml";
  e2e::write_file(pod_file, R"(apiVersion: v1
kind: Pod
metadata:
  name: shell
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["/bin/sh", "-c", "sleep 60"]
)");
  ASSERT_EQ(kubectl({"create", "-f", pod_file}).exit_code, 0);
  ASSERT_EQ(kubectl({"wait", "--for=condition=Ready", "pod/shell", "--timeout=15s"}).exit_code, 0);

  const auto echo = kubectl({"exec", "shell", "--", "sh", "-c", "echo out; echo err >&2"});
  ASSERT_EQ(echo.exit_code, 0) << echo.output;
  EXPECT_THAT(echo.output, HasSubstr("out"));
  EXPECT_THAT(echo.output, HasSubstr("err"));
  const auto failed = kubectl({"exec", "shell", "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(failed.exit_code, 3) << failed.output;

  const std::string local = dir_.path() + "/to-copy";
  std::filesystem::create_directories(local);
  e2e::write_file(local + "/a.txt", "alpha");
  const std::string inside = dir_.path() + "/inside";
  const auto in = kubectl({"cp", local, "shell:" + inside});
  ASSERT_EQ(in.exit_code, 0) << in.output;
  EXPECT_EQ(e2e::read_file(inside + "/a.txt"), "alpha");
  const auto out = kubectl({"cp", "shell:" + inside, dir_.path() + "/back"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(e2e::read_file(dir_.path() + "/back/a.txt"), "alpha");
}

// A user whose credential comes from an exec plugin: kubectl runs it and the fake accepts the
// token it printed only while it is valid (the hook sets its lifetime).
TEST_F(KubectlTest, AnExecPluginsTokenIsAcceptedUntilItExpires) {
  start_server();
  ASSERT_EQ(call("POST", "/fake/tokens?token=plugin-token&ttl_s=6").status, 200);
  const std::string plugin = dir_.path() + "/plugin.sh";
  e2e::write_file(plugin,
                  "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                  "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"plugin-token\"}}'\n");
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  e2e::write_file(kubeconfig_,
                  "apiVersion: v1\nkind: Config\nclusters: [{name: f, cluster: {server: " +
                      server_->url() + ", certificate-authority: " + shared_pki().ca_cert +
                      "}}]\nusers: [{name: u, user: {exec: {apiVersion: "
                      "client.authentication.k8s.io/v1, command: " +
                      plugin +
                      ", interactiveMode: Never}}}]\ncontexts: [{name: c, context: "
                      "{cluster: f, user: u}}]\ncurrent-context: c\n");
  const auto ok = kubectl({"get", "nodes"});
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("node-0"));
  std::this_thread::sleep_for(6100ms);
  const auto expired = kubectl({"get", "nodes"});
  EXPECT_NE(expired.exit_code, 0) << expired.output;
  EXPECT_THAT(expired.output, HasSubstr("Unauthorized"));
}

// Secrets (issue 37: a job's secret values travel in one): kubectl creates, lists, patches and
// deletes them, and `get secrets` prints how many keys, never a value.
TEST_F(KubectlTest, SecretsAreCreatedListedPatchedAndDeleted) {
  start_server();
  // From a manifest (`kubectl create secret generic` sends protobuf, which the fake does not
  // read).
  const std::string secret_file = dir_.path() + "/secret.yaml";
  e2e::write_file(secret_file,
                  "apiVersion: v1\nkind: Secret\nmetadata:\n  name: hf\n"
                  "stringData:\n  HF_TOKEN: hf_abc123\n");
  const auto created = kubectl({"create", "-f", secret_file});
  ASSERT_EQ(created.exit_code, 0) << created.output;
  EXPECT_THAT(created.output, HasSubstr("secret/hf created"));
  const auto table = kubectl({"get", "secrets"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_THAT(table.output, ::testing::ContainsRegex("NAME +TYPE +DATA +AGE"));
  EXPECT_THAT(table.output, ::testing::ContainsRegex("hf +Opaque +1 +[0-9]+s"));
  EXPECT_THAT(table.output, ::testing::Not(HasSubstr("hf_abc123")));

  const auto merged =
      kubectl({"patch", "secret", "hf", "--type", "merge", "-p", R"({"stringData":{"W":"w"}})"});
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_THAT(merged.output, HasSubstr("secret/hf patched"));
  const auto got = kubectl({"get", "secret", "hf", "-o", "json"});
  ASSERT_EQ(got.exit_code, 0) << got.output;
  const json secret = json::parse(got.output);
  EXPECT_EQ(secret["data"]["HF_TOKEN"], "aGZfYWJjMTIz");  // base64("hf_abc123")
  EXPECT_EQ(secret["data"]["W"], "dw==");
  // kubectl's default patch type is a strategic merge, which the fake does not take.
  const auto strategic = kubectl({"patch", "secret", "hf", "-p", R"({"data":{}})"});
  EXPECT_NE(strategic.exit_code, 0) << strategic.output;
  EXPECT_THAT(strategic.output, HasSubstr("application/merge-patch+json"));

  const auto deleted = kubectl({"delete", "secret", "hf"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.output;
  EXPECT_THAT(deleted.output, HasSubstr("secret \"hf\" deleted"));
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/secrets/hf").status, 404);
}

TEST_F(KubectlTest, StrictValidationRejectsAnUnknownTopLevelField) {
  start_server();
  const std::string job_file = dir_.path() + "/bad.yaml";
  e2e::write_file(job_file, std::string(kJobYaml) + "bogus: 1\n");
  const auto r = kubectl({"create", "-f", job_file});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("unknown field \"bogus\""));
}

TEST_F(KubectlTest, AWrongTokenIsUnauthorized) {
  start_server();
  write_kubeconfig(kubeconfig_, {server_->url(), shared_pki().ca_cert, "not-the-token"});
  const auto r = kubectl({"get", "nodes"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("You must be logged in to the server"));
}

TEST_F(KubectlTest, AnotherCaIsRefused) {
  start_server();
  const TestPki other = make_test_pki(dir_.path() + "/other-pki", "other");
  write_kubeconfig(kubeconfig_, {server_->url(), other.ca_cert, token_});
  const auto r = kubectl({"get", "nodes"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("certificate signed by unknown authority"));
}

}  // namespace
}  // namespace orch::fake_kube::testing
