// A job's secret_env on Kubernetes (issue 37): the values go into a Secret of the attempt, the
// Job only names it (secretKeyRef), and no value is anywhere in the Job's JSON.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_secret.h"
#include "adapters/kubernetes/kube_status.h"
#include "scheduler/common/base64.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::request;

ClusterSpec cluster() {
  ClusterSpec c;
  c.name = "kube-east";
  c.provider = "kubernetes";
  c.kubernetes.pod.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  return c;
}

KubeLaunchPlan plan_of(const LaunchRequest& r) {
  auto plan = make_launch_plan(r, cluster(), "ml");
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  return plan.ok() ? *plan : KubeLaunchPlan{};
}

// The container's env entry of that name; null when absent.
json env_entry(const json& job, const std::string& name) {
  for (const json& e : job["spec"]["template"]["spec"]["containers"][0]["env"]) {
    if (e["name"] == name) return e;
  }
  return nullptr;
}

const char* kHfToken = "hf_Zx9$(HOME)$$secret value";

LaunchRequest with_secrets() {
  LaunchRequest r = request();
  r.secret_env = {{"HF_TOKEN", kHfToken}, {"WANDB_API_KEY", "wandb-7f3a"}};
  return r;
}

TEST(kube_parse_secret, TheJobNamesTheSecretAndHoldsNoValue) {
  const KubeLaunchPlan p = plan_of(with_secrets());
  EXPECT_EQ(p.secret_name, "orch-12-3-mx325f71-secret");
  EXPECT_EQ(p.secrets_path, "/api/v1/namespaces/ml/secrets");
  EXPECT_EQ(p.secret_path, "/api/v1/namespaces/ml/secrets/orch-12-3-mx325f71-secret");
  // Neither the values nor their base64 are anywhere in the Job.
  for (const std::string& value : {std::string(kHfToken), std::string("wandb-7f3a")}) {
    EXPECT_THAT(p.job_body, Not(HasSubstr(value)));
    EXPECT_THAT(p.job_body, Not(HasSubstr(encode_base64(value))));
  }
  const json job = json::parse(p.job_body);
  for (const char* var : {"HF_TOKEN", "WANDB_API_KEY"}) {
    const json e = env_entry(job, var);
    ASSERT_FALSE(e.is_null()) << var;
    EXPECT_FALSE(e.contains("value")) << e.dump();
    EXPECT_EQ(e["valueFrom"]["secretKeyRef"],
              json({{"name", "orch-12-3-mx325f71-secret"}, {"key", var}}));
  }
  // The plain env is untouched.
  EXPECT_EQ(env_entry(job, "WANDB_MODE")["value"], "offline");
}

TEST(kube_parse_secret, TheSecretHoldsTheValuesBase64AsTheyAre) {
  const KubeLaunchPlan p = plan_of(with_secrets());
  const json secret = json::parse(p.secret_body);
  EXPECT_EQ(secret["apiVersion"], "v1");
  EXPECT_EQ(secret["kind"], "Secret");
  EXPECT_EQ(secret["type"], "Opaque");
  EXPECT_EQ(secret["metadata"]["name"], p.secret_name);
  EXPECT_EQ(secret["metadata"]["namespace"], "ml");
  // Labelled like the Job, so that what lists the attempt's objects finds it too.
  EXPECT_EQ(secret["metadata"]["labels"], json::parse(p.job_body)["metadata"]["labels"]);
  // Not $-escaped: the kubelet expands `value` entries only, never a Secret's data.
  EXPECT_EQ(secret["data"]["HF_TOKEN"], encode_base64(kHfToken));
  EXPECT_EQ(secret["data"]["WANDB_API_KEY"], encode_base64("wandb-7f3a"));
  EXPECT_EQ(secret["data"].size(), 2u);
}

TEST(kube_parse_secret, WithoutSecretsThereIsNoSecret) {
  const KubeLaunchPlan p = plan_of(request());
  EXPECT_TRUE(p.secret_name.empty());
  EXPECT_TRUE(p.secret_body.empty());
  EXPECT_TRUE(p.secret_path.empty());
  EXPECT_THAT(p.job_body, Not(HasSubstr("secretKeyRef")));
}

TEST(kube_parse_secret, ASecretWinsOverEnvAndTheLaunchContractOverBoth) {
  LaunchRequest r = with_secrets();
  r.env["HF_TOKEN"] = "a plain value";
  r.secret_env["ORCH_JOB_ID"] = "forged";
  const json job = json::parse(plan_of(r).job_body);
  EXPECT_TRUE(env_entry(job, "HF_TOKEN").contains("valueFrom"));
  EXPECT_THAT(plan_of(r).job_body, Not(HasSubstr("a plain value")));
  EXPECT_EQ(env_entry(job, "ORCH_JOB_ID"), json({{"name", "ORCH_JOB_ID"}, {"value", "12"}}));
  EXPECT_FALSE(json::parse(plan_of(r).secret_body)["data"].contains("ORCH_JOB_ID"))
      << "a value nothing refers to does not travel";

  // Multi-node: the rank variables stay the downward API's.
  r.nodes = 2;
  r.secret_env["RANK"] = "7";
  const json gang = json::parse(plan_of(r).job_body);
  EXPECT_TRUE(env_entry(gang, "RANK")["valueFrom"].contains("fieldRef"));
  int ranks = 0;
  for (const json& e : gang["spec"]["template"]["spec"]["containers"][0]["env"]) {
    ranks += e["name"] == "RANK" ? 1 : 0;
  }
  EXPECT_EQ(ranks, 1);
}

TEST(kube_parse_secret, ANulIsRefusedNamingTheVariableNotTheValue) {
  LaunchRequest r = request();
  r.secret_env = {{"KEY", std::string("abc\0def", 7)}};
  auto plan = make_launch_plan(r, cluster(), "ml");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind, ErrorKind::invalid);
  EXPECT_THAT(plan.error().message, HasSubstr("secret_env variable KEY contains a NUL byte"));
  EXPECT_THAT(plan.error().message, Not(HasSubstr("abc")));
  // Bytes that are not UTF-8 are fine: the Secret's data is base64.
  r.secret_env = {{"KEY", "\xff\xfe binary"}};
  const KubeLaunchPlan p = plan_of(r);
  EXPECT_EQ(json::parse(p.secret_body)["data"]["KEY"], encode_base64("\xff\xfe binary"));
  r.secret_env = {{"1BAD", "v"}};
  EXPECT_FALSE(make_launch_plan(r, cluster(), "ml").ok());
}

TEST(kube_parse_secret, ALongTokensSecretNameIsStillADnsLabel) {
  LaunchRequest r = with_secrets();
  r.token = "Orch_" + std::string(50, 'X') + ".retry";
  const KubeLaunchPlan p = plan_of(r);
  EXPECT_LE(p.secret_name.size(), 63u);
  EXPECT_TRUE(is_dns_label(p.secret_name)) << p.secret_name;
  EXPECT_EQ(p.secret_name, secret_name_for(p.job_name));
}

TEST(kube_parse_secret, TheOwnerPatchNamesTheJobAndWritesValuesOnlyWhenAsked) {
  const json owner = json::parse(secret_owner_patch("orch-1", "uid-1"));
  EXPECT_EQ(owner, json::parse(R"({"metadata":{"ownerReferences":[{"apiVersion":"batch/v1",
      "kind":"Job","name":"orch-1","uid":"uid-1","blockOwnerDeletion":false,
      "controller":false}]}})"));
  const std::map<std::string, std::string> values = {{"K", "v"}};
  const json refresh = json::parse(secret_owner_patch("orch-1", "uid-1", &values));
  EXPECT_EQ(refresh["data"], json({{"K", encode_base64("v")}}));
  EXPECT_EQ(refresh["metadata"], owner["metadata"]);
}

TEST(kube_parse_secret, AJobsUidIsRead) {
  auto job = parse_job(
      R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"j","uid":"0b1c"},"spec":{}})");
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->uid, "0b1c");
}

}  // namespace
}  // namespace orch::kube
