// Secrets in the fake API server (issue 37): stored as the real server stores them, resolved by
// valueFrom.secretKeyRef when a pod's process starts (CreateContainerConfigError until they
// exist), patched, and collected with the Job that owns them.

#include <gmock/gmock.h>

#include "scheduler/common/base64.h"
#include "tests/integration/fake_kube/fake_kube_fixture.h"

namespace orch::fake_kube::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSecrets = "/api/v1/namespaces/default/secrets";

class SecretsTest : public FakeKubeTest {
 protected:
  void SetUp() override {
    FakeKubeTest::SetUp();
    start_server();
  }

  static json secret(const std::string& name, const json& data) {
    return {{"apiVersion", "v1"},
            {"kind", "Secret"},
            {"metadata", {{"name", name}, {"labels", {{"app", "fake-kube-test"}}}}},
            {"data", data}};
  }

  // A job whose process prints $VALUE, which comes from key `key` of Secret `name`.
  static json job_reading(const std::string& job_name, const std::string& name,
                          const std::string& key) {
    json j = job(job_name, "printf '%s\\n' \"$VALUE\"");
    j["spec"]["template"]["spec"]["containers"][0]["env"] = json::array(
        {{{"name", "VALUE"}, {"valueFrom", {{"secretKeyRef", {{"name", name}, {"key", key}}}}}}});
    return j;
  }

  std::string pod_log(const json& pod) {
    const std::string name = pod["metadata"]["name"];
    return call("GET", "/api/v1/namespaces/default/pods/" + name + "/log").body;
  }

  // The first pod of the job once its container waits, with that waiting state.
  json waiting_state(const std::string& job_name) {
    json state;
    wait_for("/api/v1/namespaces/default/pods?labelSelector=job-name%3D" + job_name,
             [&](const json& list) {
               for (const json& p : list["items"]) {
                 const json cs =
                     p.value("status", json::object()).value("containerStatuses", json::array());
                 const json now =
                     cs.empty() ? json::object() : cs[0].value("state", json::object());
                 if (now.contains("waiting")) state = now.at("waiting");
               }
               return !state.is_null();
             });
    return state;
  }
};

TEST_F(SecretsTest, ASecretIsStoredBase64AndItsValueReachesTheProcessUnexpanded) {
  // "$(HOME)" and "$$" are not expanded in a Secret's value (only `value` entries are).
  const std::string value = "s3cr$(HOME)t$$ with spaces";
  json created = post(kSecrets, [&] {
    json s = secret("creds", {{"TOKEN", encode_base64(value)}});
    s["stringData"] = {{"PLAIN", "plain text"}};
    return s;
  }());
  EXPECT_EQ(created["type"], "Opaque");
  EXPECT_FALSE(created.contains("stringData")) << "folded into data and never stored";
  EXPECT_EQ(created["data"]["PLAIN"], encode_base64("plain text"));
  EXPECT_FALSE(created["metadata"]["uid"].get<std::string>().empty());

  json list = get(std::string(kSecrets) + "?labelSelector=app%3Dfake-kube-test");
  EXPECT_EQ(list["kind"], "SecretList");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "creds");

  create_job(job_reading("reads", "creds", "TOKEN"));
  json pod = wait_pod_phase("reads", "Succeeded");
  EXPECT_EQ(pod_log(pod), value + "\n");
}

TEST_F(SecretsTest, APodWaitsInCreateContainerConfigErrorUntilItsSecretAndKeyExist) {
  create_job(job_reading("early", "late", "K"));
  json waiting = waiting_state("early");
  EXPECT_EQ(waiting["reason"], "CreateContainerConfigError");
  EXPECT_EQ(waiting["message"], "secret \"late\" not found");

  // The Secret comes without the key: still waiting, now for the key.
  post(kSecrets, secret("late", {{"OTHER", encode_base64("x")}}));
  wait_for("/api/v1/namespaces/default/pods?labelSelector=job-name%3Dearly", [](const json& l) {
    return l.dump().find("couldn't find key K in Secret default/late") != std::string::npos;
  });
  json pods = job_pods("early");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["status"]["phase"], "Pending");

  // A merge patch adds the key: the same pod starts and prints it.
  KubeReply patched = call("PATCH", std::string(kSecrets) + "/late",
                           json{{"data", {{"K", encode_base64("finally")}}}}.dump());
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.json()["data"]["OTHER"], encode_base64("x")) << "a merge keeps the rest";
  json pod = wait_pod_phase("early", "Succeeded");
  EXPECT_EQ(pod["metadata"]["name"], pods[0]["metadata"]["name"]);
  EXPECT_EQ(pod_log(pod), "finally\n");
}

TEST_F(SecretsTest, ASecretOwnedByAJobGoesWithItAndAnUnownedOneStays) {
  json owner = create_job(job("owner", "sleep 30"));
  post(kSecrets, secret("owned", {{"K", encode_base64("v")}}));
  post(kSecrets, secret("free", {{"K", encode_base64("v")}}));
  const json ref = {{"apiVersion", "batch/v1"},
                    {"kind", "Job"},
                    {"name", "owner"},
                    {"uid", owner["metadata"]["uid"]},
                    {"blockOwnerDeletion", false},
                    {"controller", false}};
  KubeReply patched = call("PATCH", std::string(kSecrets) + "/owned",
                           json{{"metadata", {{"ownerReferences", json::array({ref})}}}}.dump());
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.json()["metadata"]["ownerReferences"][0]["uid"], owner["metadata"]["uid"]);

  ASSERT_EQ(call("DELETE", "/apis/batch/v1/namespaces/default/jobs/owner",
                 R"({"propagationPolicy":"Background"})")
                .status,
            200);
  wait_for(std::string(kSecrets) + "/owned",
           [](const json& s) { return s.value("code", 0) == 404; });
  EXPECT_EQ(call("GET", std::string(kSecrets) + "/free").status, 200);
}

TEST_F(SecretsTest, PatchesAreCheckedAsTheRealServerChecksThem) {
  json created = post(kSecrets, secret("checked", {{"K", encode_base64("v")}}));
  const std::string path = std::string(kSecrets) + "/checked";
  // A stale resourceVersion is a failed precondition.
  KubeReply stale = call("PATCH", path, R"({"metadata":{"resourceVersion":"1"},"data":{}})");
  EXPECT_EQ(stale.status, 409) << stale.body;
  EXPECT_EQ(stale.json()["reason"], "Conflict");
  // Not base64, a key that is not a config key.
  KubeReply bad = call("PATCH", path, R"({"data":{"K":"not base64!"}})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_THAT(bad.json()["message"].get<std::string>(), HasSubstr("illegal base64 data"));
  KubeReply key = call("PATCH", path, R"({"data":{"bad key":"dg=="}})");
  EXPECT_EQ(key.status, 422) << key.body;
  EXPECT_THAT(key.json()["message"].get<std::string>(), HasSubstr("a valid config key"));
  // The server's own fields stay; the name cannot change.
  KubeReply uid = call("PATCH", path, R"({"metadata":{"uid":"forged"}})");
  ASSERT_EQ(uid.status, 200) << uid.body;
  EXPECT_EQ(uid.json()["metadata"]["uid"], created["metadata"]["uid"]);
  EXPECT_EQ(call("PATCH", path, R"({"metadata":{"name":"other"}})").status, 422);
  // A Secret that is not there.
  KubeReply missing = call("PATCH", std::string(kSecrets) + "/absent", R"({"data":{}})");
  EXPECT_EQ(missing.status, 404);
  // Pods are not patched by the fake (discovery does not list the verb).
  EXPECT_EQ(call("PATCH", "/api/v1/namespaces/default/pods/x", "{}").status, 405);
}

// The RBAC stand-in: credentials whose Role lacks a verb get the real 403.
TEST_F(SecretsTest, AForbiddenVerbIsAnsweredAsRbacAnswersIt) {
  ASSERT_EQ(call("POST", "/fake/forbid?verb=create&resource=secrets").status, 200);
  KubeReply denied = call("POST", kSecrets, secret("s", json::object()).dump());
  EXPECT_EQ(denied.status, 403) << denied.body;
  EXPECT_EQ(denied.json()["reason"], "Forbidden");
  EXPECT_EQ(denied.json()["message"],
            "secrets is forbidden: User \"fake-kube-user\" cannot create resource \"secrets\" in "
            "API group \"\" in the namespace \"default\"");
  EXPECT_EQ(call("GET", kSecrets).status, 200) << "only that verb";
  ASSERT_EQ(call("DELETE", "/fake/forbid").status, 200);
  post(kSecrets, secret("s", json::object()));
}

}  // namespace
}  // namespace orch::fake_kube::testing
