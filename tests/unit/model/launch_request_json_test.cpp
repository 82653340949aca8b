// A launch as the outbox stores it: every field survives the round trip, resume candidates with
// their manifests included, and one not listed yet (no manifest) too.
#include <gtest/gtest.h>

#include "scheduler/model/launch_request_json.h"

namespace orch {
namespace {

TEST(LaunchRequestJson, ResumeCandidatesSurviveTheOutboxWithAndWithoutAManifest) {
  LaunchRequest r;
  r.token = "orch-7-2-abc";
  r.job_id = 7;
  r.attempt_no = 2;
  r.job_name = "toy";
  r.command = "toy_trainer";
  r.resume_env = "RESUME";
  Manifest listed;
  listed.directory = true;
  listed.files.push_back({"model.bin", 12, std::string(64, 'a')});
  r.resume_candidates.push_back({3, 40, "/ckpt/step-40", listed});
  r.resume_candidates.push_back({2, 30, "/ckpt/step-30", Manifest{}});

  auto back = launch_request_from_json(launch_request_to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->resume_env, "RESUME");
  ASSERT_EQ(back->resume_candidates.size(), 2u);
  EXPECT_EQ(back->resume_candidates[0].checkpoint_id, 3);
  EXPECT_EQ(back->resume_candidates[0].step, 40);
  EXPECT_TRUE(back->resume_candidates[0].manifest.directory);
  ASSERT_EQ(back->resume_candidates[0].manifest.files.size(), 1u);
  EXPECT_EQ(back->resume_candidates[0].manifest.files[0].path, "model.bin");
  EXPECT_TRUE(back->resume_candidates[1].manifest.files.empty());
}

TEST(LaunchRequestJson, SecretsTravelAsNamesAndTheTeamNeverAsValues) {
  LaunchRequest r;
  r.token = "t";
  r.job_name = "toy";
  r.command = "x";
  r.secret_refs = {{"API_KEY", "wandb"}, {"HF_TOKEN", "hf-token"}};
  r.team = "nlp";
  r.secret_env = {{"API_KEY", "hunter2"}, {"HF_TOKEN", "s3cret"}};
  const nlohmann::json j = launch_request_to_json(r);
  EXPECT_EQ(j.dump().find("hunter2"), std::string::npos) << j.dump();
  EXPECT_EQ(j.dump().find("s3cret"), std::string::npos) << j.dump();
  auto back = launch_request_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->secret_refs, r.secret_refs);
  EXPECT_EQ(back->team, "nlp");
  EXPECT_TRUE(back->secret_env.empty());
}

TEST(LaunchRequestJson, AnOutboxRowThatNamedAServerFileReadsBackAsARetiredReference) {
  nlohmann::json old = launch_request_to_json(LaunchRequest{});
  old["secret_refs"] = {{"API_KEY", {{"file", "/srv/state/admin.token"}}},
                        {"HF_TOKEN", {{"env", "AWS_SECRET_ACCESS_KEY"}}}};
  auto back = launch_request_from_json(old);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->secret_refs,
            (std::map<std::string, std::string>{{"API_KEY", ""}, {"HF_TOKEN", ""}}));
  EXPECT_EQ(launch_request_to_json(*back).dump().find("admin.token"), std::string::npos);
}

TEST(LaunchRequestJson, AStoredLaunchFromBeforeCandidatesStillLoads) {
  nlohmann::json old = {{"token", "t"},      {"job_id", 1},       {"attempt_no", 1},
                        {"job_name", "toy"}, {"command", "x"},    {"env", nlohmann::json::object()},
                        {"nodes", 1},        {"gpus_per_node", 1}};
  auto r = launch_request_from_json(old);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->resume_candidates.empty());
  EXPECT_EQ(r->resume_env, "ORCH_RESUME_FROM");
  EXPECT_FALSE(r->time_limit_s);
}

TEST(LaunchRequestJson, ATimeLimitSurvivesTheOutbox) {
  LaunchRequest r;
  r.token = "t";
  r.job_name = "toy";
  r.command = "x";
  r.time_limit_s = 5400;
  auto back = launch_request_from_json(launch_request_to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->time_limit_s, 5400);
}

TEST(LaunchRequestJson, AJobsPodSettingsSurviveTheOutbox) {
  LaunchRequest r;
  r.token = "orch-8-1-abc";
  r.command = "train";
  r.pod.image = "ghcr.io/team/trainer:7";
  r.pod.shm_size = "64Gi";
  r.pod.volumes = {{"ckpt", "train-ckpt", "", "/ckpt", false}, {"d", "", "/mnt", "/d", true}};
  r.pod.tolerations = {{"spot", "Equal", "true", "NoSchedule"}};
  r.pod.extra_resources = {{"rdma/ib", "1"}};
  // Issue 44: the pods' metadata and security, and the job's topology hint.
  r.pod.annotations = {{"k8s.v1.cni.cncf.io/networks", "rdma-net"}};
  r.pod.labels = {{"team", "research"}};
  r.pod.security = {{"IPC_LOCK"}, false, 1000, 100, true};
  r.topology = {"cloud.provider.com/topology-block", true, 2, 600};
  auto back = launch_request_from_json(launch_request_to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->pod, r.pod);
  EXPECT_EQ(back->topology, r.topology);
  // Without settings nothing is written, and an old launch reads as none.
  LaunchRequest plain;
  plain.token = "t";
  EXPECT_FALSE(launch_request_to_json(plain).contains("pod"));
  EXPECT_FALSE(launch_request_to_json(plain).contains("topology"));
}

TEST(LaunchRequestJson, AProbeRoundsGpuOptionsSurviveTheOutbox) {
  ProbeRequest r;
  r.token = "orch-burnin-a-1";
  r.gpu.nvidia_smi = "/usr/bin/nvidia-smi";
  r.gpu.expect_gpus = 8;
  r.gpu.dcgm_level = 3;
  r.gpu.dcgmi = "/usr/bin/dcgmi";
  r.gpu.torch_python = "python3";
  r.gpu.torch_s = 45;
  auto back = probe_request_from_json(probe_request_to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->gpu.nvidia_smi, "/usr/bin/nvidia-smi");
  EXPECT_EQ(back->gpu.expect_gpus, 8);
  EXPECT_EQ(back->gpu.dcgm_level, 3);
  EXPECT_EQ(back->gpu.dcgmi, "/usr/bin/dcgmi");
  EXPECT_EQ(back->gpu.torch_python, "python3");
  EXPECT_EQ(back->gpu.torch_s, 45);
  // A round queued before issue 43 has no "gpu": no GPU options.
  auto old = probe_request_from_json(nlohmann::json{{"token", "t"}});
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->gpu.expect_gpus, 0);
  EXPECT_EQ(old->gpu.dcgm_level, 0);
  EXPECT_TRUE(gpu_probe_args(old->gpu).empty());
}

}  // namespace
}  // namespace orch
