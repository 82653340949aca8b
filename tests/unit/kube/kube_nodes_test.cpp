// Nodes: GPUs, product, health and the words for what is wrong, from NodeLists in the shape
// `kubectl get nodes -o json` and GET /api/v1/nodes print.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "adapters/kubernetes/kube_status.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using testing::fixture;
using ::testing::HasSubstr;

const KubeNode* find(const std::vector<KubeNode>& nodes, const std::string& name) {
  for (const auto& n : nodes) {
    if (n.info.name == name) return &n;
  }
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

TEST(kube_parse_nodes, KubectlNodeList) {
  auto nodes = parse_node_list(fixture("nodes.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 6U);

  const KubeNode* ok = find(*nodes, "gpu-a1");
  ASSERT_NE(ok, nullptr);
  EXPECT_TRUE(ok->info.healthy);
  EXPECT_EQ(ok->info.gpus, 8);
  EXPECT_EQ(ok->info.reason, "");
  EXPECT_EQ(ok->gpu_product, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(ok->ready, "True");
  EXPECT_FALSE(ok->unschedulable);
  EXPECT_TRUE(ok->taints.empty());
  EXPECT_EQ(ok->resource_version, "918273");
  EXPECT_EQ(ok->conditions.size(), 4U);

  // Kubelet gone: Ready=Unknown; the unreachable taints it brings are not repeated.
  const KubeNode* lost = find(*nodes, "gpu-a2");
  ASSERT_NE(lost, nullptr);
  EXPECT_FALSE(lost->info.healthy);
  EXPECT_EQ(lost->ready, "Unknown");
  EXPECT_EQ(lost->info.reason,
            "NotReady (Ready=Unknown): NodeStatusUnknown: Kubelet stopped posting node status.");
  EXPECT_EQ(lost->taints.size(), 2U);
  EXPECT_EQ(lost->info.gpus, 8);

  const KubeNode* cordoned = find(*nodes, "gpu-a3");
  ASSERT_NE(cordoned, nullptr);
  EXPECT_FALSE(cordoned->info.healthy);
  EXPECT_TRUE(cordoned->unschedulable);
  EXPECT_EQ(cordoned->info.reason, "unschedulable (cordoned)");

  // A NoSchedule taint makes it unhealthy; PreferNoSchedule does not.
  const KubeNode* tainted = find(*nodes, "gpu-a4");
  ASSERT_NE(tainted, nullptr);
  EXPECT_FALSE(tainted->info.healthy);
  EXPECT_EQ(tainted->info.reason, "taint nvidia.com/gpu=broken:NoSchedule");
  EXPECT_EQ(tainted->ready, "True");

  const KubeNode* not_ready = find(*nodes, "gpu-a5");
  ASSERT_NE(not_ready, nullptr);
  EXPECT_FALSE(not_ready->info.healthy);
  EXPECT_EQ(not_ready->ready, "False");
  EXPECT_EQ(not_ready->info.reason,
            "NotReady: KubeletNotReady: container runtime network not ready: NetworkReady=false "
            "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not "
            "initialized");

  const KubeNode* cpu = find(*nodes, "cpu-b1");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(cpu->info.healthy);
  EXPECT_EQ(cpu->info.gpus, 0);
  EXPECT_EQ(cpu->gpu_product, "");

  std::vector<NodeInfo> infos = node_infos(*nodes);
  ASSERT_EQ(infos.size(), 6U);
  EXPECT_EQ(infos[0].name, "gpu-a1");
  EXPECT_EQ(infos[0].gpus, 8);
}

TEST(kube_parse_nodes, ApiNodeListAndResourceVersion) {
  const std::string text = fixture("nodelist-api.json");
  auto nodes = parse_node_list(text);
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  EXPECT_EQ(nodes->size(), 2U);
  auto rv = parse_list_resource_version(text);
  ASSERT_TRUE(rv.ok()) << rv.error().message;
  EXPECT_EQ(*rv, "918290");
  // kubectl's own List wrapper carries an empty resourceVersion: nothing to watch from.
  EXPECT_FALSE(parse_list_resource_version(fixture("nodes.json")).ok());
}

TEST(kube_parse_nodes, OtherGpuResource) {
  auto nodes = parse_node_list(fixture("nodes.json"), "amd.com/gpu");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  for (const auto& n : *nodes) EXPECT_EQ(n.info.gpus, 0) << n.info.name;
}

TEST(kube_parse_nodes, SingleNodeObject) {
  const std::string text = R"({"kind":"Node","apiVersion":"v1",
    "metadata":{"name":"gpu-x","resourceVersion":"7","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"}},
    "spec":{"taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}]},
    "status":{"allocatable":{"nvidia.com/gpu":"4"},
              "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}})";
  auto node = parse_node(text);
  ASSERT_TRUE(node.ok()) << node.error().message;
  EXPECT_EQ(node->info.gpus, 4);
  EXPECT_EQ(node->gpu_product, "NVIDIA-A100-SXM4-80GB");
  EXPECT_FALSE(node->info.healthy);  // the taint alone, without spec.unschedulable
  EXPECT_EQ(node->info.reason, "taint node.kubernetes.io/unschedulable:NoSchedule");
}

// GKE taints every GPU node nvidia.com/gpu=present:NoSchedule; attempts tolerate it, so it is
// not a health problem. Any other NoSchedule taint still is.
TEST(kube_parse_nodes, TheGpuResourcesOwnTaintIsTolerated) {
  const std::string text = R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"gke-gpu-1"},
    "spec":{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},
    "status":{"allocatable":{"nvidia.com/gpu":"8"},
              "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}})";
  auto node = parse_node(text);
  ASSERT_TRUE(node.ok()) << node.error().message;
  EXPECT_TRUE(node->info.healthy) << node->info.reason;
  EXPECT_EQ(node->info.reason, "");
  auto other = parse_node(text, "amd.com/gpu");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->info.healthy);
  EXPECT_EQ(other->info.reason, "taint nvidia.com/gpu=present:NoSchedule");
}

TEST(kube_parse_nodes, NoConditionsIsNotHealthy) {
  auto node = parse_node(R"({"metadata":{"name":"fresh"},"status":{}})");
  ASSERT_TRUE(node.ok()) << node.error().message;
  EXPECT_FALSE(node->info.healthy);
  EXPECT_EQ(node->info.reason, "no Ready condition");
  EXPECT_EQ(node->ready, "");
}

TEST(kube_parse_nodes, WholeQuantities) {
  EXPECT_EQ(*parse_whole_quantity("8"), 8);
  EXPECT_EQ(*parse_whole_quantity("0"), 0);
  EXPECT_EQ(*parse_whole_quantity("2k"), 2000);
  EXPECT_EQ(*parse_whole_quantity("4Ki"), 4096);
  EXPECT_EQ(*parse_whole_quantity("8000m"), 8);
  EXPECT_EQ(*parse_whole_quantity("2147483647"), 2147483647);
  for (const char* bad : {"", "1.5", "500m", "-1", "+1", "1e3", "8 ", " 8", "abc", "2147483648",
                          "3Gi", "1E", "99999999999999999999", "8x"}) {
    auto q = parse_whole_quantity(bad);
    EXPECT_FALSE(q.ok()) << bad;
    if (!q.ok()) {
      EXPECT_EQ(q.error().kind, ErrorKind::invalid);
    }
  }
}

void expect_malformed(std::string_view text, const std::string& words) {
  auto nodes = parse_node_list(text);
  ASSERT_FALSE(nodes.ok()) << "accepted: " << text;
  EXPECT_EQ(nodes.error().kind, ErrorKind::invalid);
  EXPECT_THAT(nodes.error().message, HasSubstr(words));
}

TEST(kube_parse_nodes, Malformed) {
  expect_malformed("", "not valid JSON");
  expect_malformed("<html>502 Bad Gateway</html>", "'<html>502 Bad Gateway</html>'");
  expect_malformed(R"([{"metadata":{"name":"a"}}])", "should be a JSON object");
  expect_malformed(R"({"kind":"NodeList"})", "no \"items\"");
  expect_malformed(R"({"items":{}})", "items should be an array");
  expect_malformed(R"({"items":[7]})", "items[0] should be an object");
  expect_malformed(R"({"items":[{"metadata":{}}]})", "items[0].metadata.name is missing");
  expect_malformed(R"({"items":[{"metadata":{"name":5}}]})", "items[0].metadata.name");
  expect_malformed(
      R"({"items":[{"metadata":{"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":"1.5"}}}]})",
      "items[0].status.allocatable[nvidia.com/gpu]: quantity '1.5'");
  expect_malformed(
      R"({"items":[{"metadata":{"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":true}}}]})",
      "should be a quantity");
  expect_malformed(R"({"items":[{"metadata":{"name":"a"},"status":{"conditions":{}}}]})",
                   "items[0].status.conditions should be an array");
  expect_malformed(
      R"({"items":[{"metadata":{"name":"a"},"status":{"conditions":[{"type":"Ready","status":true}]}}]})",
      "items[0].status.conditions[0].status should be a string, got boolean true");
  expect_malformed(R"({"items":[{"metadata":{"name":"a"},"spec":{"unschedulable":"yes"}}]})",
                   "items[0].spec.unschedulable should be true or false");
  expect_malformed(R"({"items":[{"metadata":{"name":"a"},"spec":{"taints":[{"key":1}]}}]})",
                   "items[0].spec.taints[0].key");
  expect_malformed(R"({"items":[{"metadata":{"name":"a"}},)", "not valid JSON");
  // A truncated body: every prefix is refused, none throws.
  const std::string text = fixture("nodes.json");
  for (std::size_t cut = 0; cut + 2 < text.size(); cut += 97) {
    EXPECT_FALSE(parse_node_list(text.substr(0, cut)).ok()) << cut;
  }
}

}  // namespace
}  // namespace orch::kube
