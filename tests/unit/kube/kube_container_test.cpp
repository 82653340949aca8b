// Issue 40, item 4: on Kubernetes a job's `container:` is its pods' image (over the cluster's and
// the job's kubernetes.image), its workdir the container's workingDir; container.mounts are
// refused (volumes come from kubernetes.volumes).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/kube_manifest.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::request;

ClusterSpec cluster() {
  ClusterSpec c;
  c.name = "kube-east";
  c.provider = "kubernetes";
  c.kubernetes.pod.image = "cluster/default:1";
  return c;
}

json container_of(const LaunchRequest& r) {
  auto plan = make_launch_plan(r, cluster(), "ml");
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  if (!plan.ok()) return json::object();
  return json::parse(plan->job_body)["spec"]["template"]["spec"]["containers"][0];
}

TEST(KubeContainer, TheJobsContainerImageIsThePodsImage) {
  LaunchRequest r = request();
  r.pod.image = "job/kubernetes:2";
  r.container.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  r.container.workdir = "/workspace";
  const json c = container_of(r);
  EXPECT_EQ(c["image"], "nvcr.io/nvidia/pytorch:24.05-py3");
  EXPECT_EQ(c["workingDir"], "/workspace");
}

TEST(KubeContainer, WithoutOneTheClustersImageStands) {
  const json c = container_of(request());
  EXPECT_EQ(c["image"], "cluster/default:1");
  EXPECT_FALSE(c.contains("workingDir"));
}

TEST(KubeContainer, MountsAreRefusedNamingTheKubernetesWay) {
  LaunchRequest r = request();
  r.container.image = "img:1";
  r.container.mounts = {{"/data", "/data", true}};
  auto plan = make_launch_plan(r, cluster(), "ml");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.error().message, HasSubstr("kubernetes.volumes"));
}

TEST(KubeContainer, ABadImageIsRefusedNamingTheKey) {
  LaunchRequest r = request();
  r.container.image = "img with space";
  auto plan = make_launch_plan(r, cluster(), "ml");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.error().message, HasSubstr("container.image"));
}

}  // namespace
}  // namespace orch::kube
