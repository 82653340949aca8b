// A job's `container:` and the clusters that run it (issue 40, item 4): what the spec reads and
// refuses, the words srun (pyxis) and apptainer get, and which clusters can run such a job.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "scheduler/model/container.h"
#include "scheduler/model/launch_request_json.h"
#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/container_support.h"
#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Result<JobSpec> job(const std::string& extra) {
  return parse_job_spec("name: a\ncommand: python -m pkg.train\n" + extra, "job.yaml");
}

std::string refusal(const std::string& extra) {
  auto spec = job(extra);
  return spec.ok() ? "accepted" : spec.error().message;
}

TEST(ContainerSpec, AFullSectionReadsIntoTheSpecAndBack) {
  auto spec =
      job("container:\n"
          "  image: nvcr.io#nvidia/pytorch:24.05-py3\n"
          "  mounts: [\"/data:/data:ro\", \"/scratch:/mnt/scratch\"]\n"
          "  workdir: /workspace\n"
          "  env: [HF_TOKEN, WANDB_API_KEY]\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const ContainerSpec& c = spec->container;
  EXPECT_EQ(c.image, "nvcr.io#nvidia/pytorch:24.05-py3");
  ASSERT_EQ(c.mounts.size(), 2u);
  EXPECT_EQ(c.mounts[0], (ContainerMount{"/data", "/data", true}));
  EXPECT_EQ(c.mounts[1], (ContainerMount{"/scratch", "/mnt/scratch", false}));
  EXPECT_EQ(c.workdir, "/workspace");
  EXPECT_THAT(c.env, ElementsAre("HF_TOKEN", "WANDB_API_KEY"));

  auto back = job_spec_from_json(job_spec_to_json(*spec));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->container, c);
}

TEST(ContainerSpec, AJobWithoutOneHasNone) {
  auto spec = job("");
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(spec->container.empty());
  EXPECT_FALSE(job_spec_to_json(*spec).contains("container"));
}

TEST(ContainerSpec, HostileValuesAreRefusedAtTheirLine) {
  EXPECT_THAT(refusal("container: {image: \"--privileged\"}\n"), HasSubstr("starts with '-'"));
  EXPECT_THAT(refusal("container: {image: \"img\\n--wrap=id\"}\n"), HasSubstr("job.yaml:3:"));
  EXPECT_THAT(refusal("container: {image: \"a b\"}\n"), HasSubstr("a character other than"));
  EXPECT_THAT(refusal("container: {image: i, mounts: [\"/a,/etc:/b\"]}\n"),
              HasSubstr("no ',' ':' or space"));
  EXPECT_THAT(refusal("container: {image: i, mounts: [\"/a/../etc:/b\"]}\n"),
              HasSubstr("'..' component"));
  EXPECT_THAT(refusal("container: {image: i, mounts: [\"rel:/b\"]}\n"),
              HasSubstr("not an absolute path"));
  EXPECT_THAT(refusal("container: {image: i, mounts: [\"/a:/b:rx\"]}\n"),
              HasSubstr("the only flags are ro and rw"));
  EXPECT_THAT(refusal("container: {image: i, workdir: \"/w'; id\"}\n"),
              HasSubstr("container.workdir"));
  EXPECT_THAT(refusal("container: {image: i, env: [\"A=B\"]}\n"), HasSubstr("not a variable name"));
  EXPECT_THAT(refusal("container: {mounts: []}\n"), HasSubstr("missing required key \"image\""));
  EXPECT_THAT(refusal("container: {image: i, privileged: true}\n"), HasSubstr("privileged"));
}

TEST(ContainerOptions, PyxisGetsOneWordPerOptionWithOrchestratesDirectoriesMounted) {
  ContainerSpec c{"nvcr.io#nvidia/pytorch:24.05-py3", {{"/data", "/data", true}}, "", {"HF_TOKEN"}};
  EXPECT_THAT(pyxis_options(c, {"/opt/orch", "/st/runs/t1"}, "/st/code/abc"),
              ElementsAre("--container-image=nvcr.io#nvidia/pytorch:24.05-py3",
                          "--container-mounts=/opt/orch:/opt/orch,/st/runs/t1:/st/runs/t1,"
                          "/data:/data:ro",
                          "--container-workdir=/st/code/abc", "--container-env=HF_TOKEN"));
  c.workdir = "/workspace";
  c.env.clear();
  EXPECT_THAT(pyxis_options(c, {}, "/st/code/abc"),
              ElementsAre("--container-image=nvcr.io#nvidia/pytorch:24.05-py3",
                          "--container-mounts=/data:/data:ro", "--container-workdir=/workspace"));
}

TEST(ContainerOptions, ApptainerExecsTheImageWithTheSameMountsAndWorkdir) {
  ContainerSpec c{"docker://python:3.11", {}, "", {}};
  EXPECT_THAT(apptainer_prefix(c, {"/st/runs/t1"}, "/st/runs/t1/work"),
              ElementsAre("apptainer", "exec", "--nv", "--bind", "/st/runs/t1:/st/runs/t1", "--pwd",
                          "/st/runs/t1/work", "docker://python:3.11"));
}

const char* kClusters = R"(clusters:
  - name: plain
    provider: slurm
    storage: {root: /r}
    ssh: {host: h, user: u, key_file: /k, trust_on_first_use: true}
  - name: pyx
    provider: slurm
    storage: {root: /r}
    ssh: {host: h, user: u, key_file: /k, trust_on_first_use: true}
    slurm: {containers: pyxis}
  - name: here
    provider: local
    local: {containers: apptainer}
)";

TEST(ContainerClusters, ClustersDeclareTheirRuntime) {
  auto file = parse_clusters_file(kClusters, "clusters.yaml");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(container_runtime(file->clusters[0]), ContainerRuntime::none);
  EXPECT_EQ(container_runtime(file->clusters[1]), ContainerRuntime::pyxis);
  EXPECT_EQ(container_runtime(file->clusters[2]), ContainerRuntime::apptainer);
  auto bad = parse_clusters_file(
      "clusters:\n  - name: x\n    provider: local\n    local: {containers: pyxis}\n", "c.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("none or apptainer"));
}

TEST(ContainerClusters, AJobNoAllowedClusterCanRunIsRefusedNamingThoseThatCould) {
  auto file = parse_clusters_file(kClusters, "clusters.yaml");
  ASSERT_TRUE(file.ok());
  auto spec = job("container: {image: img}\nplacement: {allowed: [plain]}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto refused = check_container_clusters(*spec, file->clusters);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("plain runs no containers"));
  EXPECT_THAT(refused.error().message, HasSubstr("clusters that could run it: pyx, here"));
  EXPECT_EQ(refused.error().where, "container");

  spec->allowed_clusters.clear();
  EXPECT_TRUE(check_container_clusters(*spec, file->clusters).ok());
  EXPECT_THAT(container_refusal(*spec, file->clusters[0]).value_or(""),
              HasSubstr("slurm.containers is none"));
  EXPECT_FALSE(container_refusal(*spec, file->clusters[1]));
}

TEST(ContainerClusters, WithNoRuntimeAnywhereTheErrorSaysHowToDeclareOne) {
  auto file =
      parse_clusters_file("clusters:\n  - name: solo\n    provider: local\n", "clusters.yaml");
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto spec = job("container: {image: img}\n");
  auto refused = check_container_clusters(*spec, file->clusters);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("slurm.containers: pyxis or apptainer"));
}

TEST(ContainerClusters, KubernetesRunsTheImageButTakesNoMounts) {
  ClusterSpec kube;
  kube.name = "k";
  kube.provider = "kubernetes";
  auto spec = job("container: {image: img, mounts: [\"/a:/a\"]}\n");
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(container_refusal(*spec, kube).value_or(""), HasSubstr("kubernetes.volumes"));
  spec->container.mounts.clear();
  EXPECT_FALSE(container_refusal(*spec, kube));
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

TEST(ContainerLaunch, TheLaunchCarriesTheContainerThroughTheOutbox) {
  LaunchRequest r;
  r.token = "orch-1-1-abc";
  r.container = {"nvcr.io#nvidia/pytorch:24.05-py3", {{"/data", "/data", true}}, "/w", {"A"}};
  auto back = launch_request_from_json(launch_request_to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->container, r.container);
  LaunchRequest bare;
  bare.token = "orch-1-1-abd";
  EXPECT_FALSE(launch_request_to_json(bare).contains("container"));
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

using ::testing::ElementsAre;

TEST(ContainerOptions, EachDirectoryIsMountedOnceAndNotInsideAnother) {
  EXPECT_THAT(bind_dirs({"/st/bin", "/st", "", "/ckpt", "/st", "/stx"}),
              ElementsAre("/st", "/ckpt", "/stx"));
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

TEST(ClusterNames, TheServersOwnTransferSourcesAreReserved) {
  for (const char* name : {"orchestrate-server", "orchestrate-relay"}) {
    auto file = parse_clusters_file(
        "clusters:\n  - name: " + std::string(name) + "\n    provider: local\n", "c.yaml");
    ASSERT_FALSE(file.ok()) << name;
    EXPECT_THAT(file.error().message, ::testing::HasSubstr("reserved"));
    EXPECT_THAT(file.error().message, ::testing::HasSubstr("c.yaml:2:"));
  }
}

}  // namespace
}  // namespace orch
