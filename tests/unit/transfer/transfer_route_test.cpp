// Which way a transfer goes (adapters/transfer/transfer_route.h), from the clusters' specs.
#include "adapters/transfer/transfer_route.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace orch::transfer {
namespace {

using ::testing::HasSubstr;

ClusterSpec local_site(const std::string& name) {
  ClusterSpec c;
  c.name = name;
  c.provider = "local";
  return c;
}

ClusterSpec slurm_site(const std::string& name, int port) {
  ClusterSpec c;
  c.name = name;
  c.provider = "slurm";
  c.ssh.host = "127.0.0.1";
  c.ssh.port = port;
  c.ssh.user = "root";
  c.ssh.key_file = "/lab/id";
  c.ssh.known_hosts = "/lab/known_hosts";
  return c;
}

TransferRequest copy(const std::string& from, const std::string& to) {
  TransferRequest r;
  r.id = 7;
  r.from = {from, "/storage/ckpt/step-500"};
  r.to = {to, "/storage/replicas/step-500"};
  r.directory = true;
  return r;
}

TEST(TransferRoute, BetweenLocalSitesIsALocalRsync) {
  auto plan = plan_route({local_site("a"), local_site("b")}, copy("a", "b"));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kind, RouteKind::local);
  EXPECT_EQ(plan->name, "local");
}

TEST(TransferRoute, ASlurmDestinationThatReachesTheSourcePullsFromIt) {
  ClusterSpec beta = slurm_site("beta", 2223);
  beta.data.pull_from["alpha"] =
      PeerSpec{"10.0.0.1", 22, "svc", "/home/svc/.ssh/alpha", "/home/svc/.ssh/known_hosts"};
  auto plan = plan_route({slurm_site("alpha", 2222), beta}, copy("alpha", "beta"));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kind, RouteKind::pull_via_destination);
  EXPECT_EQ(plan->name, "pull via beta login node");
  EXPECT_EQ(plan->peer.host, "10.0.0.1");
  EXPECT_EQ(plan->from.name, "alpha");
  EXPECT_EQ(plan->to.name, "beta");
}

TEST(TransferRoute, SlurmSitesThatCannotReachEachOtherRelayThroughTheOrchestrator) {
  ClusterSpec beta = slurm_site("beta", 2223);
  beta.data.pull_from["gamma"] = PeerSpec{"10.0.0.3", 22, "svc", "", ""};  // not alpha
  auto plan = plan_route({slurm_site("alpha", 2222), beta}, copy("alpha", "beta"));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kind, RouteKind::relay);
  EXPECT_EQ(plan->name, "relay via orchestrator");
}

TEST(TransferRoute, ThePullGoesOneWayOnly) {
  ClusterSpec beta = slurm_site("beta", 2223);
  beta.data.pull_from["alpha"] = PeerSpec{"10.0.0.1", 22, "svc", "", ""};
  // beta can pull from alpha; a copy from beta to alpha still has to relay.
  auto plan = plan_route({slurm_site("alpha", 2222), beta}, copy("beta", "alpha"));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kind, RouteKind::relay);
}

TEST(TransferRoute, SlurmToLocalPullsHereAndLocalToSlurmPushes) {
  auto pull = plan_route({slurm_site("alpha", 2222), local_site("here")}, copy("alpha", "here"));
  ASSERT_TRUE(pull);
  EXPECT_EQ(pull->kind, RouteKind::pull_here);
  EXPECT_EQ(pull->name, "pull from alpha login node");
  auto push = plan_route({slurm_site("alpha", 2222), local_site("here")}, copy("here", "alpha"));
  ASSERT_TRUE(push);
  EXPECT_EQ(push->kind, RouteKind::push_here);
  EXPECT_EQ(push->name, "push to alpha login node");
}

TEST(TransferRoute, WithinOneSlurmSiteRsyncRunsOnItsLoginNode) {
  auto plan = plan_route({slurm_site("alpha", 2222)}, copy("alpha", "alpha"));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kind, RouteKind::on_login_node);
  EXPECT_EQ(plan->name, "on alpha login node");
}

TEST(TransferRoute, KubernetesCopiesAreNotRsyncs) {
  // They travel through pods/exec (server/site_transfer_port.h routes them there).
  ClusterSpec kube = local_site("kube");
  kube.provider = "kubernetes";
  for (auto r : {copy("kube", "a"), copy("a", "kube")}) {
    auto plan = plan_route({local_site("a"), kube}, r);
    ASSERT_FALSE(plan);
    EXPECT_EQ(plan.error().kind, ErrorKind::unsupported);
    EXPECT_THAT(plan.error().message, HasSubstr("pods/exec, not rsync"));
  }
  ClusterSpec sim = local_site("sim");
  sim.provider = "sim";
  auto none = plan_route({local_site("a"), sim}, copy("a", "sim"));
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("simulator"));
}

TEST(TransferRoute, AKeyWithAPassphraseCannotBeUsedInBatchMode) {
  ClusterSpec alpha = slurm_site("alpha", 2222);
  alpha.ssh.key_passphrase_env = "ALPHA_KEY_PASS";
  auto plan = plan_route({alpha, local_site("here")}, copy("alpha", "here"));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().kind, ErrorKind::unsupported);
  EXPECT_THAT(plan.error().message, HasSubstr("ALPHA_KEY_PASS"));
  EXPECT_THAT(plan.error().message, HasSubstr("batch mode"));
}

TEST(TransferRoute, BadRequestsAreInvalid) {
  const std::vector<ClusterSpec> sites = {local_site("a"), local_site("b")};
  auto unknown = plan_route(sites, copy("a", "nowhere"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, ErrorKind::invalid);
  EXPECT_THAT(unknown.error().message, HasSubstr("nowhere"));

  TransferRequest relative = copy("a", "b");
  relative.to.path = "replicas/x";
  EXPECT_EQ(plan_route(sites, relative).error().kind, ErrorKind::invalid);

  TransferRequest onto_itself = copy("a", "a");
  onto_itself.to.path = onto_itself.from.path;
  EXPECT_EQ(plan_route(sites, onto_itself).error().kind, ErrorKind::invalid);
}

TEST(TransferCap, TheSmallestOfTheCallersAndBothSitesLimits) {
  ClusterSpec a = local_site("a");
  ClusterSpec b = local_site("b");
  EXPECT_EQ(effective_cap(0, a, b), 0);  // none anywhere
  EXPECT_EQ(effective_cap(5e6, a, b), 5e6);
  b.data.bwlimit_mb_s = 2;  // MB = 10^6 bytes
  EXPECT_EQ(effective_cap(0, a, b), 2e6);
  EXPECT_EQ(effective_cap(5e6, a, b), 2e6);
  EXPECT_EQ(effective_cap(1e6, a, b), 1e6);
  a.data.bwlimit_mb_s = 1.5;
  EXPECT_EQ(effective_cap(0, a, b), 1.5e6);
}

}  // namespace
}  // namespace orch::transfer
