// The fake API server over HTTPS without kubectl: auth, discovery, object shapes and errors.

#include <gmock/gmock.h>

#include "tests/integration/fake_kube/fake_kube_fixture.h"

namespace orch::fake_kube::testing {
namespace {

using ::testing::HasSubstr;

class ApiTest : public FakeKubeTest {
 protected:
  void SetUp() override {
    FakeKubeTest::SetUp();
    start_server();
  }
};

TEST_F(ApiTest, EveryPathNeedsTheBearerToken) {
  for (const std::string& token : {std::string(), std::string("wrong")}) {
    KubeEndpoint ep = endpoint_;
    ep.token = token;
    for (const char* path : {"/version", "/api/v1/nodes", "/fake/compact"}) {
      const KubeReply r = kube_request(ep, "GET", path);
      EXPECT_EQ(r.status, 401) << path << " " << r.error;
      json body = r.json();
      EXPECT_EQ(body["kind"], "Status");
      EXPECT_EQ(body["status"], "Failure");
      EXPECT_EQ(body["reason"], "Unauthorized");
      EXPECT_EQ(body["code"], 401);
    }
  }
  EXPECT_EQ(call("GET", "/version").status, 200);
}

TEST_F(ApiTest, DiscoveryDescribesWhatIsServed) {
  EXPECT_EQ(get("/version")["gitVersion"], "v1.32.0-fake");
  EXPECT_EQ(get("/api")["versions"], json::array({"v1"}));
  json groups = get("/apis");
  ASSERT_EQ(groups["groups"].size(), 2u);
  EXPECT_EQ(groups["groups"][0]["preferredVersion"]["groupVersion"], "batch/v1");
  // Kueue's Workloads (issue 44), as a cluster with Kueue installed lists them.
  EXPECT_EQ(groups["groups"][1]["preferredVersion"]["groupVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(get("/apis/kueue.x-k8s.io/v1beta1")["resources"][0]["name"], "workloads");

  std::set<std::string> core;
  json v1 = get("/api/v1");
  for (const json& r : v1["resources"]) core.insert(r["name"]);
  EXPECT_EQ(core, (std::set<std::string>{"namespaces", "nodes", "persistentvolumeclaims", "pods",
                                         "pods/log", "secrets", "services"}));
  json batch = get("/apis/batch/v1");
  EXPECT_EQ(batch["groupVersion"], "batch/v1");
  EXPECT_EQ(batch["resources"][0]["name"], "jobs");
  EXPECT_EQ(batch["resources"][0]["namespaced"], true);

  const KubeReply aggregated =
      kube_request(endpoint_, "GET", "/apis", "", 5s,
                   "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  EXPECT_EQ(aggregated.content_type,
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  EXPECT_EQ(aggregated.json()["items"][0]["versions"][0]["resources"][0]["resource"], "jobs");
  EXPECT_EQ(aggregated.json()["items"][1]["metadata"]["name"], "kueue.x-k8s.io");
}

TEST_F(ApiTest, NodesCarryGpusProductReadinessAndTaints) {
  json list = get("/api/v1/nodes");
  EXPECT_EQ(list["kind"], "NodeList");
  EXPECT_FALSE(list["metadata"]["resourceVersion"].get<std::string>().empty());
  ASSERT_EQ(list["items"].size(), 2u);
  json node = get("/api/v1/nodes/node-1");
  EXPECT_EQ(node["kind"], "Node");
  EXPECT_EQ(node["status"]["allocatable"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(node["metadata"]["labels"]["kubernetes.io/hostname"], "node-1");
  bool ready = false;
  for (const json& c : node["status"]["conditions"]) {
    if (c["type"] == "Ready") ready = c["status"] == "True";
  }
  EXPECT_TRUE(ready);
  EXPECT_FALSE(node["metadata"]["uid"].get<std::string>().empty());
  EXPECT_FALSE(node["metadata"]["creationTimestamp"].get<std::string>().empty());
}

TEST_F(ApiTest, ErrorsAreStatusObjects) {
  KubeReply r = call("GET", "/apis/batch/v1/namespaces/default/jobs/nope");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.json()["reason"], "NotFound");
  EXPECT_EQ(r.json()["message"], "jobs.batch \"nope\" not found");
  EXPECT_EQ(r.json()["details"]["kind"], "jobs");

  create_job(job("twice", "true"));
  r = call("POST", "/apis/batch/v1/namespaces/default/jobs", job("twice", "true").dump());
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.json()["reason"], "AlreadyExists");
  EXPECT_EQ(r.json()["message"], "jobs.batch \"twice\" already exists");

  r = call("POST", "/apis/batch/v1/namespaces/nowhere/jobs", job("x", "true").dump());
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.json()["message"], "namespaces \"nowhere\" not found");

  json always = job("always", "true");
  always["spec"]["template"]["spec"]["restartPolicy"] = "Always";
  r = call("POST", "/apis/batch/v1/namespaces/default/jobs", always.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.json()["reason"], "Invalid");
  EXPECT_THAT(r.json()["message"].get<std::string>(),
              HasSubstr("spec.template.spec.restartPolicy: Unsupported value: \"Always\""));

  r = call("GET", "/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(r.status, 404);
  r = call("PUT", "/api/v1/nodes/node-0", "{}");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.json()["reason"], "MethodNotAllowed");
}

TEST_F(ApiTest, AJobGetsItsSelectorLabelsAndAPodOwnedByIt) {
  json created = create_job(job("shape", "echo hi"));
  const std::string uid = created["metadata"]["uid"];
  EXPECT_EQ(created["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], uid);
  EXPECT_EQ(created["spec"]["template"]["metadata"]["labels"]["job-name"], "shape");
  EXPECT_EQ(created["spec"]["completions"], 1);
  json pod = wait_pod_phase("shape", "Succeeded");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], uid);
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["kind"], "Job");
  const json& term = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(term["exitCode"], 0);
  EXPECT_EQ(term["reason"], "Completed");
  json done = wait_for("/apis/batch/v1/namespaces/default/jobs/shape",
                       [](const json& j) { return j["status"].value("succeeded", 0) == 1; });
  EXPECT_EQ(last_condition(done)["type"], "Complete");

  const KubeReply log = call("GET", "/api/v1/namespaces/default/pods/" +
                                        pod["metadata"]["name"].get<std::string>() + "/log");
  EXPECT_EQ(log.status, 200);
  EXPECT_EQ(log.body, "hi\n");
}

TEST_F(ApiTest, AFailingContainerFailsTheJobWithBackoffLimitZero) {
  create_job(job("fails", "echo oops >&2; exit 3"));
  json pod = wait_pod_phase("fails", "Failed");
  const json& term = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(term["exitCode"], 3);
  EXPECT_EQ(term["reason"], "Error");
  json done = wait_for("/apis/batch/v1/namespaces/default/jobs/fails", [](const json& j) {
    return j["status"].value("failed", 0) == 1 && j["status"].contains("conditions");
  });
  EXPECT_EQ(last_condition(done)["type"], "Failed");
  EXPECT_EQ(last_condition(done)["reason"], "BackoffLimitExceeded");
  EXPECT_EQ(job_pods("fails").size(), 1u) << "backoffLimit 0: no second pod";
}

TEST_F(ApiTest, ServicesForIndexedJobs) {
  json svc = post("/api/v1/namespaces/default/services",
                  {{"apiVersion", "v1"},
                   {"kind", "Service"},
                   {"metadata", {{"name", "train"}}},
                   {"spec",
                    {{"clusterIP", "None"},
                     {"selector", {{"job-name", "train"}}},
                     {"ports", json::array({{{"port", 29500}}})}}}});
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(get("/api/v1/namespaces/default/services/train")["spec"]["ports"][0]["protocol"],
            "TCP");
  EXPECT_EQ(call("DELETE", "/api/v1/namespaces/default/services/train").status, 200);
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/services/train").status, 404);
}

// Issue 44: claims are stored for their access modes, validated like the real server's.
TEST_F(ApiTest, AClaimIsBoundWithItsAccessModesAndOneWithoutModesIsRefused) {
  const json spec = {{"accessModes", {"ReadWriteOnce"}},
                     {"resources", {{"requests", {{"storage", "10Gi"}}}}}};
  post("/api/v1/namespaces/default/persistentvolumeclaims",
       {{"metadata", {{"name", "ckpt"}}}, {"spec", spec}});
  const json got = get("/api/v1/namespaces/default/persistentvolumeclaims/ckpt");
  EXPECT_EQ(got["status"]["phase"], "Bound");
  EXPECT_EQ(got["status"]["accessModes"], json({"ReadWriteOnce"}));
  EXPECT_EQ(get("/api/v1/namespaces/default/persistentvolumeclaims")["items"].size(), 1U);

  const KubeReply refused =
      call("POST", "/api/v1/namespaces/default/persistentvolumeclaims",
           json{{"metadata", {{"name", "bare"}}}, {"spec", json::object()}}.dump());
  EXPECT_EQ(refused.status, 422);
  EXPECT_THAT(refused.body, HasSubstr("at least 1 access mode is required"));
}

}  // namespace
}  // namespace orch::fake_kube::testing
