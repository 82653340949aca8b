// The provider catalog: what the parser, the brain and the transfer planner ask of a provider
// instead of comparing its name.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/provider_catalog.h"

namespace orch {
namespace {

TEST(ProviderCatalog, NamesEachProviderOnceAndNoSectionTwice) {
  std::set<std::string> names;
  std::set<std::string> sections;
  for (const ProviderTraits& p : provider_catalog()) {
    EXPECT_TRUE(names.insert(std::string(p.name)).second) << p.name;
    for (auto s : p.sections) EXPECT_TRUE(sections.insert(std::string(s)).second) << s;
    EXPECT_EQ(p.read_sections == nullptr, p.sections.empty()) << p.name;
    EXPECT_EQ(find_provider(p.name), &p);
  }
  EXPECT_EQ(find_provider("aws"), nullptr);
  EXPECT_EQ(provider_names(), "local, slurm, kubernetes");
}

TEST(ProviderCatalog, TheSimulatorsClustersListStorageButNoClustersFileMayNameThem) {
  const ProviderTraits* sim = find_provider("sim");
  ASSERT_NE(sim, nullptr);
  EXPECT_FALSE(sim->in_clusters_file);
  ClusterSpec c;
  c.provider = "sim";
  EXPECT_TRUE(c.lists_storage());
  auto file = parse_clusters_file("clusters:\n  - {name: a, provider: sim}\n", "c.yaml");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.error().message.find("must be one of local, slurm, kubernetes, got \"sim\""),
            std::string::npos)
      << file.error().message;
}

TEST(ProviderCatalog, WhatEachProviderCanDoWithItsStorage) {
  ClusterSpec c;
  c.provider = "local";
  EXPECT_TRUE(c.lists_storage());
  c.provider = "slurm";
  EXPECT_TRUE(c.lists_storage());
  c.provider = "kubernetes";
  EXPECT_TRUE(c.lists_storage()) << "through its storage helper pod";
  c.provider = "aws";
  EXPECT_FALSE(c.lists_storage()) << "an unknown provider is never listed";
  EXPECT_EQ(find_provider("slurm")->data_route, DataRoute::ssh);
  EXPECT_EQ(find_provider("local")->data_route, DataRoute::local_fs);
  EXPECT_EQ(find_provider("kubernetes")->data_route, DataRoute::pod_exec);
  EXPECT_FALSE(find_provider("sim")->no_data_route_why.empty());
}

TEST(ProviderCatalog, TheParserReadsAProvidersSectionsThroughItsReader) {
  auto file = parse_clusters_file(R"(clusters:
  - name: k
    provider: kubernetes
    kubernetes: {kubeconfig: /etc/kube.conf, image: img, namespace: team-a}
)",
                                  "c.yaml");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->clusters.at(0).kubernetes.namespace_, "team-a");
  auto wrong = parse_clusters_file(R"(clusters:
  - {name: k, provider: kubernetes, kubernetes: {kubeconfig: /k, image: i, namespace: Team_A}}
)",
                                   "c.yaml");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("DNS-1123"), std::string::npos) << wrong.error().message;
}

}  // namespace
}  // namespace orch
