// The Job (and Service) an attempt becomes: the fields that matter, checked in the JSON body,
// and hostile commands and environment values that must reach the process byte for byte.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_manifest.h"
#include "scheduler/model/checkpoint_dir.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/model/launch_contract.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::job_words;
using testing::request;

ClusterSpec cluster() {
  ClusterSpec c;
  c.name = "kube-east";
  c.provider = "kubernetes";
  c.kubernetes.pod.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  c.kubernetes.termination_grace_s = 180;
  return c;
}

KubeLaunchPlan plan_of(const LaunchRequest& r, const ClusterSpec& c = cluster(),
                       const std::string& ns = "ml") {
  auto plan = make_launch_plan(r, c, ns);
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  return plan.ok() ? *plan : KubeLaunchPlan{};
}

json body(const std::string& text) {
  return json::parse(text);
}

// The container's environment as a map (values as written in the manifest).
std::map<std::string, std::string> env_of(const json& job) {
  std::map<std::string, std::string> env;
  for (const auto& e : job["spec"]["template"]["spec"]["containers"][0]["env"]) {
    EXPECT_EQ(env.count(e["name"].get<std::string>()), 0U) << "duplicate " << e["name"];
    // A value from the downward API reads "fieldRef:<path>".
    env[e["name"].get<std::string>()] =
        e.contains("valueFrom")
            ? "fieldRef:" + e["valueFrom"]["fieldRef"]["fieldPath"].get<std::string>()
            : e["value"].get<std::string>();
  }
  return env;
}

// The words of the container's command as the manifest holds them ('$' written "$$", which the
// kubelet reads back as '$').
json as_written(const std::vector<std::string>& argv) {
  json out = json::array();
  for (const auto& word : argv) out.push_back(escape_kube_references(word));
  return out;
}

// The pod without the agent (kubernetes.agent_image: none); with it, kube_agent_manifest_test.cpp.
ClusterSpec without_agent() {
  ClusterSpec c = cluster();
  c.kubernetes.agent_image = kNoAgentImage;
  return c;
}

TEST(kube_parse_manifest, SingleNodeJob) {
  KubeLaunchPlan p = plan_of(request(), without_agent());
  EXPECT_EQ(p.namespace_, "ml");
  EXPECT_EQ(p.job_name, "orch-12-3-mx325f71");
  EXPECT_EQ(p.jobs_path, "/apis/batch/v1/namespaces/ml/jobs");
  EXPECT_EQ(p.job_path, "/apis/batch/v1/namespaces/ml/jobs/orch-12-3-mx325f71");
  EXPECT_EQ(p.services_path, "/api/v1/namespaces/ml/services");
  EXPECT_EQ(p.label_selector, "orchestrate.dev/token=orch-12-3-mx325f71");
  EXPECT_TRUE(p.service_name.empty());
  EXPECT_TRUE(p.service_path.empty());
  EXPECT_TRUE(p.service_body.empty());

  json job = body(p.job_body);
  EXPECT_EQ(job["spec"]["template"]["spec"]["tolerations"],
            json::parse(R"([{"key":"nvidia.com/gpu","operator":"Equal","value":"present",
                                "effect":"NoSchedule"}])"));
  EXPECT_EQ(job["apiVersion"], "batch/v1");
  EXPECT_EQ(job["kind"], "Job");
  EXPECT_EQ(job["metadata"]["name"], "orch-12-3-mx325f71");
  EXPECT_EQ(job["metadata"]["namespace"], "ml");
  const json labels = {{"orchestrate.dev/token", "orch-12-3-mx325f71"},
                       {"orchestrate.dev/job-id", "12"},
                       {"orchestrate.dev/attempt", "3"},
                       {"app.kubernetes.io/managed-by", "orchestrate"}};
  EXPECT_EQ(job["metadata"]["labels"], labels);
  EXPECT_EQ(job["metadata"]["annotations"]["orchestrate.dev/job-name"], "llama-8b pretrain");

  const json& spec = job["spec"];
  EXPECT_EQ(spec["backoffLimit"], 0);
  EXPECT_EQ(spec["completions"], 1);
  EXPECT_EQ(spec["parallelism"], 1);
  EXPECT_FALSE(spec.contains("completionMode"));
  EXPECT_EQ(spec["template"]["metadata"]["labels"], labels);

  const json& pod = spec["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_EQ(pod["terminationGracePeriodSeconds"], 180);
  EXPECT_EQ(pod["enableServiceLinks"], false);
  EXPECT_EQ(pod["automountServiceAccountToken"], false);
  EXPECT_FALSE(pod.contains("subdomain"));
  EXPECT_FALSE(pod.contains("affinity"));
  ASSERT_EQ(pod["containers"].size(), 1U);
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["name"], "job");
  EXPECT_EQ(c["image"], "nvcr.io/nvidia/pytorch:24.05-py3");
  // Under the job's shell (issue 40): unset, bash where the image has it, else sh.
  EXPECT_EQ(c["command"],
            as_written(job_shell_argv("", "exec python3 train.py --config llama-8b.yaml")));
  EXPECT_EQ(c["resources"], json({{"limits", {{"nvidia.com/gpu", "8"}}}}));

  std::map<std::string, std::string> want = {
      {"ORCH_RESUME_FROM", "/ckpt/run1/step-500.pt"},
      {"WANDB_MODE", "offline"},
      {"ORCH_LAUNCH_TOKEN", "orch-12-3-mx325f71"},
      {"ORCH_TOKEN", "orch-12-3-mx325f71"},
      {"ORCH_JOB_ID", "12"},
      {"ORCH_ATTEMPT", "3"},
      {"ORCH_GPUS", "8"},
      {"ORCH_SITE", "kube-east"},
  };
  // The launch contract of a pod alone: rank 0 of 1, meeting at its own loopback.
  const std::string port = std::to_string(master_port_for("orch-12-3-mx325f71"));
  for (const auto& [name, value] :
       std::map<std::string, std::string>{{"ORCH_NODE_RANK", "0"},
                                          {"ORCH_NNODES", "1"},
                                          {"ORCH_TASK_RANK", "0"},
                                          {"ORCH_NTASKS", "1"},
                                          {"ORCH_LOCAL_RANK", "0"},
                                          {"ORCH_MASTER_ADDR", "127.0.0.1"},
                                          {"ORCH_MASTER_PORT", port},
                                          {"NODE_RANK", "0"},
                                          {"WORLD_SIZE", "1"},
                                          {"RANK", "0"},
                                          {"LOCAL_RANK", "0"},
                                          {"MASTER_ADDR", "127.0.0.1"},
                                          {"MASTER_PORT", port}}) {
    want[name] = value;
  }
  EXPECT_EQ(env_of(job), want);
  EXPECT_FALSE(job["spec"]["template"]["spec"].contains("affinity"));
}

TEST(kube_parse_manifest, EveryPodOfAGangGetsItsPlaceAndANodeOfItsOwn) {
  LaunchRequest r = request();
  r.nodes = 3;
  r.exclude_nodes = {"gpu-7"};
  KubeLaunchPlan p = plan_of(r);
  json job = body(p.job_body);
  auto env = env_of(job);
  const std::string index =
      "fieldRef:metadata.annotations['batch.kubernetes.io/job-completion-index']";
  for (const char* name : {"ORCH_NODE_RANK", "NODE_RANK", "ORCH_TASK_RANK", "RANK"}) {
    EXPECT_EQ(env[name], index) << name;
  }
  EXPECT_EQ(env["ORCH_NNODES"], "3");
  EXPECT_EQ(env["WORLD_SIZE"], "3");
  EXPECT_EQ(env["ORCH_NTASKS"], "3");
  EXPECT_EQ(env["LOCAL_RANK"], "0");
  EXPECT_EQ(env["MASTER_ADDR"], "orch-12-3-mx325f71-0.orch-12-3-mx325f71");
  EXPECT_EQ(env["ORCH_MASTER_ADDR"], env["MASTER_ADDR"]);
  EXPECT_EQ(env["MASTER_PORT"], std::to_string(master_port_for(r.token)));
  // One pod per node (required anti-affinity on the token, by hostname), beside the exclusion.
  const json& affinity = job["spec"]["template"]["spec"]["affinity"];
  ASSERT_TRUE(affinity.contains("nodeAffinity")) << affinity.dump();
  const json& terms = affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  ASSERT_EQ(terms.size(), 1u) << affinity.dump();
  EXPECT_EQ(terms[0]["topologyKey"], "kubernetes.io/hostname");
  EXPECT_EQ(terms[0]["labelSelector"]["matchLabels"]["orchestrate.dev/token"], r.token);
}

TEST(kube_parse_manifest, MoreThanOneTaskPerPodIsRefusedWithWhatToDoInstead) {
  LaunchRequest r = request();
  r.nodes = 2;
  r.tasks_per_node = 4;
  auto plan = make_launch_plan(r, cluster(), "ml");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind, ErrorKind::invalid);
  EXPECT_THAT(plan.error().message, HasSubstr("tasks_per_node 4"));
  EXPECT_THAT(plan.error().message, HasSubstr("torchrun"));
}

TEST(kube_parse_manifest, IndexedJobWithHeadlessService) {
  LaunchRequest r = request();
  r.nodes = 4;
  KubeLaunchPlan p = plan_of(r);
  EXPECT_EQ(p.service_name, "orch-12-3-mx325f71");
  EXPECT_EQ(p.service_path, "/api/v1/namespaces/ml/services/orch-12-3-mx325f71");

  json job = body(p.job_body);
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["completions"], 4);
  EXPECT_EQ(job["spec"]["parallelism"], 4);
  EXPECT_EQ(job["spec"]["backoffLimit"], 0);
  EXPECT_EQ(job["spec"]["template"]["spec"]["subdomain"], p.service_name);
  auto env = env_of(job);
  EXPECT_EQ(env["ORCH_RENDEZVOUS"], "orch-12-3-mx325f71-0.orch-12-3-mx325f71");
  EXPECT_EQ(env["ORCH_GPUS"], "32");
  EXPECT_EQ(
      job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"],
      "8");

  json svc = body(p.service_body);
  EXPECT_EQ(svc["apiVersion"], "v1");
  EXPECT_EQ(svc["kind"], "Service");
  EXPECT_EQ(svc["metadata"]["name"], p.service_name);
  EXPECT_EQ(svc["metadata"]["namespace"], "ml");
  EXPECT_EQ(svc["metadata"]["labels"]["orchestrate.dev/token"], "orch-12-3-mx325f71");
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(svc["spec"]["selector"], json({{"orchestrate.dev/token", "orch-12-3-mx325f71"}}));
  EXPECT_FALSE(svc["spec"].contains("ports"));
}

TEST(kube_parse_manifest, ServiceNameStartsWithALetter) {
  LaunchRequest r = request();
  r.token = "7-2-abc";
  r.nodes = 2;
  KubeLaunchPlan p = plan_of(r);
  EXPECT_EQ(p.job_name, "7-2-abc");
  EXPECT_EQ(p.service_name, "orch-7-2-abc");
  EXPECT_EQ(env_of(body(p.job_body))["ORCH_RENDEZVOUS"], "7-2-abc-0.orch-7-2-abc");
}

TEST(kube_parse_manifest, ExcludedNodesAreNotIn) {
  LaunchRequest r = request();
  // A valid node name (a DNS subdomain) too long for a label value.
  const std::string long_name =
      "gpu-node-0017.rack-42.us-east-2.compute.internal.training.example.com";
  ASSERT_GT(long_name.size(), 63U);
  r.exclude_nodes = {"gpu-a2", "gpu-a5.east.internal", "gpu-a2", long_name};
  json job = body(plan_of(r).job_body);
  const json& terms = job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 1U);
  const json want_expr = json::array({{{"key", "kubernetes.io/hostname"},
                                       {"operator", "NotIn"},
                                       {"values", {"gpu-a2", "gpu-a5.east.internal"}}}});
  EXPECT_EQ(terms[0]["matchExpressions"], want_expr);
  std::set<std::string> fields;
  for (const auto& f : terms[0]["matchFields"]) {
    EXPECT_EQ(f["key"], "metadata.name");
    EXPECT_EQ(f["operator"], "NotIn");
    ASSERT_EQ(f["values"].size(), 1U);  // the API allows one value per field requirement
    fields.insert(f["values"][0].get<std::string>());
  }
  EXPECT_EQ(fields, (std::set<std::string>{"gpu-a2", "gpu-a5.east.internal", long_name}));
}

TEST(kube_parse_manifest, NoGpusNoLimit) {
  LaunchRequest r = request();
  r.gpus_per_node = 0;
  json job = body(plan_of(r).job_body);
  EXPECT_FALSE(job["spec"]["template"]["spec"]["containers"][0].contains("resources"));
  EXPECT_EQ(env_of(job)["ORCH_GPUS"], "0");
}

TEST(kube_parse_manifest, OtherGpuResource) {
  ClusterSpec c = cluster();
  c.kubernetes.gpu_resource = "amd.com/gpu";
  json job = body(plan_of(request(), c).job_body);
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["resources"],
            json({{"limits", {{"amd.com/gpu", "8"}}}}));
}

TEST(kube_parse_manifest, OrchestrateVariablesWinOverTheJobsEnv) {
  LaunchRequest r = request();
  r.env["ORCH_LAUNCH_TOKEN"] = "forged";
  r.env["ORCH_SITE"] = "elsewhere";
  r.env["ORCH_TOKEN"] = "the job's API token";  // the job's own: the launch token's old name yields
  auto env = env_of(body(plan_of(r).job_body));
  EXPECT_EQ(env["ORCH_LAUNCH_TOKEN"], "orch-12-3-mx325f71");
  EXPECT_EQ(env["ORCH_TOKEN"], "the job's API token");
  EXPECT_EQ(env["ORCH_SITE"], "kube-east");
}

// What the process receives: the manifest's strings after the kubelet's $(VAR) expansion.
TEST(kube_parse_manifest, HostileCommandAndEnvSurviveByteExact) {
  const std::string hostile =
      "echo \"it's\" '$HOME' $(HOME) $$ $(ORCH_TOKEN) \\$x `id` ; rm -rf / #\n"
      "\ttab \x01 \x7f caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x9a\x80 {\"json\": [1]} $";
  LaunchRequest r = request();
  r.command = hostile;
  r.env = {{"HOSTILE", hostile}, {"EMPTY", ""}, {"DOLLARS", "$$$(A)$"}};
  KubeLaunchPlan p = plan_of(r, without_agent());  // the words after the agent's "--" alike
  json job = body(p.job_body);                     // valid JSON whatever the bytes
  const json& c = job["spec"]["template"]["spec"]["containers"][0];

  std::map<std::string, std::string> vars;  // what the kubelet would expand with
  for (const auto& e : c["env"]) vars[e["name"]] = e["value"];
  vars["HOME"] = "/root";
  vars["A"] = "expanded";

  const std::string written = c["command"][4].get<std::string>();  // job_shell_argv's $1
  EXPECT_EQ(written, escape_kube_references(hostile));
  EXPECT_EQ(expand_kube_references(written, vars), hostile);
  EXPECT_EQ(expand_kube_references(env_of(job)["HOSTILE"], vars), hostile);
  EXPECT_EQ(expand_kube_references(env_of(job)["DOLLARS"], vars), "$$$(A)$");
  EXPECT_EQ(env_of(job)["EMPTY"], "");
  EXPECT_EQ(c["command"][0], "/bin/sh");
  EXPECT_EQ(c["command"][1], "-c");
}

TEST(kube_parse_manifest, TheJobsCheckpointDirectoryIsMadeFirstAndNamedInItsEnvironment) {
  LaunchRequest r = request();
  r.checkpoint_dir = "/ckpt/job-7";
  r.env["ORCH_CHECKPOINT_DIR"] = r.checkpoint_dir;  // as the brain sets it
  r.command = "train --ckpt-dir \"$ORCH_CHECKPOINT_DIR\"";
  json job = body(plan_of(r).job_body);
  const json& c = job["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(env_of(job)["ORCH_CHECKPOINT_DIR"], "/ckpt/job-7");
  const std::string run = expand_kube_references(job_words(c)[4].get<std::string>(), {});
  EXPECT_EQ(run, std::string(kMakeCheckpointDirCommand) + "\n" + r.command);

  r.checkpoint_dir.clear();  // a launch recorded before jobs had one: the command as it is
  const json old = body(plan_of(r).job_body);
  EXPECT_EQ(job_words(old["spec"]["template"]["spec"]["containers"][0])[4],
            escape_kube_references(r.command));
}

TEST(kube_parse_manifest, TheCommandRunsUnderTheJobsShell) {
  LaunchRequest r = request();
  r.command = "source /opt/env.sh && exec python train.py";
  r.shell = "sh";
  const json sh = body(plan_of(r).job_body)["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(job_words(sh), json::array({"/bin/sh", "-c", r.command}));
  r.shell = "bash-login";
  const json login = body(plan_of(r).job_body)["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(job_words(login), as_written(job_shell_argv("bash-login", r.command)));
  EXPECT_THAT(job_words(login)[2].get<std::string>(), HasSubstr("exec bash -l -c"));
}

TEST(kube_parse_manifest, KubeletExpansionRules) {
  const std::map<std::string, std::string> vars = {{"A", "x"}, {"EMPTY", ""}};
  EXPECT_EQ(expand_kube_references("$(A)", vars), "x");
  EXPECT_EQ(expand_kube_references("$(EMPTY)-", vars), "-");
  EXPECT_EQ(expand_kube_references("$(B)", vars), "$(B)");
  EXPECT_EQ(expand_kube_references("$$(A)", vars), "$(A)");
  EXPECT_EQ(expand_kube_references("$$$(A)", vars), "$x");
  EXPECT_EQ(expand_kube_references("$A $", vars), "$A $");
  EXPECT_EQ(expand_kube_references("$(A", vars), "$(A");
  EXPECT_EQ(expand_kube_references("a$", vars), "a$");
  EXPECT_EQ(escape_kube_references("a$b$$"), "a$$b$$$$");
}

TEST(kube_parse_manifest, JobNameOfAnUnusualToken) {
  // Valid label values but not DNS labels, or too long for a pod host name.
  const std::vector<std::string> tokens = {"Orch_12.3-X", "orch_12_3", std::string(60, 'a'),
                                           std::string(63, 'b'), "a.b"};
  std::set<std::string> names;
  for (const auto& t : tokens) {
    std::string name = job_name_for_token(t);
    EXPECT_TRUE(is_dns_label(name)) << name;
    EXPECT_LE(name.size(), kMaxJobName) << name;
    names.insert(name);
    LaunchRequest r = request();
    r.token = t;
    r.nodes = 2;
    KubeLaunchPlan p = plan_of(r);
    EXPECT_EQ(p.job_name, name);
    EXPECT_EQ(body(p.job_body)["metadata"]["labels"]["orchestrate.dev/token"], t);
    EXPECT_EQ(p.label_selector, "orchestrate.dev/token=" + t);
  }
  EXPECT_EQ(names.size(), tokens.size());
  // Lower-casing alone would make these two the same name.
  EXPECT_NE(job_name_for_token("Orch-1-A"), job_name_for_token("orch-1-a"));
  EXPECT_EQ(job_name_for_token("orch-1-a"), "orch-1-a");
  EXPECT_EQ(job_name_for_token("Orch_12.3-X"), job_name_for_token("Orch_12.3-X"));
}

TEST(kube_parse_manifest, JobNameAnnotationIsCleaned) {
  LaunchRequest r = request();
  r.job_name = std::string("bad\nname\x01 \xff end ") + std::string(400, 'x');
  json job = body(plan_of(r).job_body);
  std::string a = job["metadata"]["annotations"]["orchestrate.dev/job-name"];
  EXPECT_EQ(a.substr(0, 19), "bad?name? ? end xxx");
  EXPECT_LE(a.size(), 256U);
}

TEST(kube_parse_manifest, Paths) {
  EXPECT_EQ(pods_path("ml"), "/api/v1/namespaces/ml/pods");
  EXPECT_EQ(pod_log_path("ml", "p-0"), "/api/v1/namespaces/ml/pods/p-0/log");
  EXPECT_EQ(nodes_path(), "/api/v1/nodes");
  EXPECT_EQ(token_label_selector("t-1"), "orchestrate.dev/token=t-1");
  json del = json::parse(delete_background_body());
  EXPECT_EQ(del["kind"], "DeleteOptions");
  EXPECT_EQ(del["propagationPolicy"], "Background");
}

void expect_invalid(const LaunchRequest& r, const ClusterSpec& c, const std::string& ns,
                    const std::string& words) {
  auto plan = make_launch_plan(r, c, ns);
  ASSERT_FALSE(plan.ok()) << "accepted: " << words;
  EXPECT_EQ(plan.error().kind, ErrorKind::invalid);
  EXPECT_THAT(plan.error().message, HasSubstr(words));
}

TEST(kube_parse_manifest, RefusesWhatCannotBeLaunchedExactly) {
  const ClusterSpec c = cluster();
  auto with = [](auto change) {
    LaunchRequest r = request();
    change(r);
    return r;
  };
  expect_invalid(with([](LaunchRequest& r) { r.token = "orch/12"; }), c, "ml", "orch/12");
  expect_invalid(with([](LaunchRequest& r) { r.token = ""; }), c, "ml", "launch token");
  expect_invalid(with([](LaunchRequest& r) { r.token = "-orch"; }), c, "ml", "-orch");
  expect_invalid(with([](LaunchRequest& r) { r.token = std::string(64, 'a'); }), c, "ml",
                 "1-63 characters");
  expect_invalid(with([](LaunchRequest& r) { r.env["BAD-NAME"] = "x"; }), c, "ml", "BAD-NAME");
  expect_invalid(with([](LaunchRequest& r) { r.env["1X"] = "x"; }), c, "ml", "'1X'");
  expect_invalid(with([](LaunchRequest& r) { r.env[""] = "x"; }), c, "ml", "name ''");
  expect_invalid(with([](LaunchRequest& r) { r.command = std::string("a\0b", 3); }), c, "ml",
                 "NUL byte");
  expect_invalid(with([](LaunchRequest& r) { r.env["X"] = std::string("a\0b", 3); }), c, "ml",
                 "environment variable X contains a NUL");
  expect_invalid(with([](LaunchRequest& r) { r.command = "caf\xc3"; }), c, "ml", "UTF-8");
  expect_invalid(with([](LaunchRequest& r) { r.env["X"] = "\xed\xa0\x80"; }), c, "ml", "UTF-8");
  expect_invalid(with([](LaunchRequest& r) { r.env["X"] = "\xc0\xaf"; }), c, "ml", "UTF-8");
  expect_invalid(with([](LaunchRequest& r) { r.nodes = 0; }), c, "ml", "at least one node");
  expect_invalid(with([](LaunchRequest& r) { r.gpus_per_node = -1; }), c, "ml", "negative");
  expect_invalid(with([](LaunchRequest& r) { r.job_id = -1; }), c, "ml", "negative");
  expect_invalid(with([](LaunchRequest& r) { r.exclude_nodes = {"gpu a2"}; }), c, "ml", "'gpu a2'");
  expect_invalid(with([](LaunchRequest& r) { r.exclude_nodes = {"GPU-A2"}; }), c, "ml", "'GPU-A2'");
  expect_invalid(with([](LaunchRequest& r) { r.exclude_nodes = {""}; }), c, "ml", "node name");
  expect_invalid(request(), c, "ML", "namespace 'ML'");
  expect_invalid(request(), c, "", "namespace ''");

  ClusterSpec no_image = c;
  no_image.kubernetes.pod.image = "";
  expect_invalid(request(), no_image, "ml", "kubernetes.image");
  ClusterSpec blank_image = c;
  blank_image.kubernetes.pod.image = "pytorch latest";
  expect_invalid(request(), blank_image, "ml", "kubernetes.image");
  ClusterSpec bad_resource = c;
  bad_resource.kubernetes.gpu_resource = "nvidia.com/gpu 8";
  expect_invalid(request(), bad_resource, "ml", "gpu_resource");
  ClusterSpec no_resource = c;
  no_resource.kubernetes.gpu_resource = "";
  expect_invalid(request(), no_resource, "ml", "gpu_resource");
  ClusterSpec bad_grace = c;
  bad_grace.kubernetes.termination_grace_s = -5;
  expect_invalid(request(), bad_grace, "ml", "termination_grace_s");
}

TEST(kube_parse_manifest, DnsLabel) {
  EXPECT_TRUE(is_dns_label("a"));
  EXPECT_TRUE(is_dns_label("orch-12-3-mx325f71"));
  EXPECT_TRUE(is_dns_label("7up"));
  EXPECT_FALSE(is_dns_label(""));
  EXPECT_FALSE(is_dns_label("-a"));
  EXPECT_FALSE(is_dns_label("a-"));
  EXPECT_FALSE(is_dns_label("A"));
  EXPECT_FALSE(is_dns_label("a.b"));
  EXPECT_FALSE(is_dns_label(std::string(64, 'a')));
  EXPECT_TRUE(is_dns_label(std::string(63, 'a')));
}

}  // namespace
}  // namespace orch::kube
