// The composition root's makers against the provider catalog: every provider a clusters file
// may name can be made into a site, and nothing else can.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "scheduler/spec/provider_catalog.h"
#include "server/site_factories.h"

namespace orch {
namespace {

TEST(SiteFactories, EveryProviderOfTheCatalogHasOneMakerAndNoMakerLacksAProvider) {
  // A provider a clusters file may name is served by the server; the simulator's clusters
  // ("sim") are made by `orchestrate simulate` itself and never reach the server.
  std::set<std::string> catalog;
  for (const ProviderTraits& p : provider_catalog()) {
    if (p.in_clusters_file) catalog.insert(std::string(p.name));
  }
  std::set<std::string> makers;
  for (const SiteFactory& f : site_factories()) {
    EXPECT_TRUE(makers.insert(std::string(f.provider)).second) << "two makers for " << f.provider;
    EXPECT_NE(f.make, nullptr) << f.provider;
  }
  EXPECT_EQ(makers, catalog);
}

TEST(SiteFactories, ALocalClusterIsMadeIntoASiteOfItsName) {
  ClusterSpec c;
  c.name = "alpha";
  c.provider = "local";
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.storage_root = "/nonexistent/orch-site-factories-test";  // nothing is created at making
  auto site = make_site(c, SiteContext{"/bin/true"});
  ASSERT_TRUE(site.ok()) << site.error().message;
  EXPECT_NE(site->get(), nullptr);
}

TEST(SiteFactories, AProviderWithoutAMakerIsUnsupportedAndSaysWhich) {
  ClusterSpec c;
  c.name = "sim";
  c.provider = "simulator";
  auto site = make_site(c, SiteContext{});
  ASSERT_FALSE(site.ok());
  EXPECT_EQ(site.error().kind, ErrorKind::unsupported);
  EXPECT_EQ(site.error().message,
            "cluster sim: provider \"simulator\" is not supported by this build");
}

}  // namespace
}  // namespace orch
