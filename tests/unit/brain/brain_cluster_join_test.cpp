// Clusters that join a running server (issue 15): `orchestrate cluster add` or a reload that
// finds a new cluster in the file. The brain admits each as it would at start, places waiting
// work there at once, remembers the document it came in, and refuses a name it already has.
#include <gmock/gmock.h>

#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class BrainClusterJoin : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha").gpus_per_node(8).nodes(1)}); }

  Result<BrainReply> join(std::vector<ClusterSpec> specs, const std::string& document = "") {
    return brain->handle(AddClusters{std::move(specs), "gamma.yaml", document});
  }
  Admission admission(const std::string& cluster) {
    return store->cluster(cluster).value()->admission;
  }
};

TEST_F(BrainClusterJoin, AWaitingJobIsPlacedOnTheClusterThatJoins) {
  JobId id = submit_anyway(make_job().gpus(8).nodes(2));  // alpha has one node: kept for gamma
  EXPECT_TRUE(attempts(id).empty());

  auto reply = join({make_cluster("gamma").gpus_per_node(8).nodes(2)});
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->message, "joined: gamma (active)");
  EXPECT_EQ(admission("gamma"), Admission::active);
  ASSERT_NE(brain->cluster_spec("gamma"), nullptr);
  ASSERT_EQ(attempts(id).size(), 1u);
  EXPECT_EQ(last_attempt(id).cluster, "gamma");
  EXPECT_EQ(outbox("gamma").size(), 1u) << "its launch waits for gamma's site worker";
}

TEST_F(BrainClusterJoin, EachIsAdmittedAsAtStart) {
  auto reply = join({make_cluster("ordered").promised(clock.now_ms() + 86'400'000),
                     make_cluster("new").burn_in_on_join(), make_cluster("plain")});
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->message, "joined: ordered (pending-delivery), new (pending), plain (active)");
  EXPECT_EQ(admission("ordered"), Admission::pending_delivery);
  EXPECT_EQ(admission("new"), Admission::pending);
  EXPECT_EQ(admission("plain"), Admission::active);
  EXPECT_EQ(store->cluster("plain").value()->health, SiteHealth::healthy);
}

TEST_F(BrainClusterJoin, ATakenNameChangesNothing) {
  auto taken = join({make_cluster("gamma"), make_cluster("alpha")});
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().kind, ErrorKind::conflict);
  EXPECT_THAT(taken.error().message, HasSubstr("cluster \"alpha\" is already configured"));
  EXPECT_EQ(brain->cluster_spec("gamma"), nullptr);
  EXPECT_FALSE(store->cluster("gamma").value().has_value());

  auto twice = join({make_cluster("gamma"), make_cluster("gamma")});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().kind, ErrorKind::conflict);
  EXPECT_EQ(brain->clusters().size(), 1u);
}

TEST_F(BrainClusterJoin, AFailedEventTakesItsClustersOutAgain) {
  // The document is remembered under the cluster's name; a second row of that name fails the
  // transaction after gamma was appended, and gamma must be gone with the rows.
  ASSERT_TRUE(store->insert_added_cluster({"gamma", "earlier.yaml", "clusters: []", 1}).ok());
  auto failed = join({make_cluster("gamma")}, "clusters:\n  - name: gamma\n");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(brain->cluster_spec("gamma"), nullptr);
  EXPECT_FALSE(store->cluster("gamma").value().has_value());
  JobId id = submit(make_job().gpus(8).on({"alpha"}));
  EXPECT_EQ(last_attempt(id).cluster, "alpha") << "placement still works on what is there";
}

TEST_F(BrainClusterJoin, TheDocumentIsRememberedForTheNextStart) {
  const std::string doc = "clusters:\n  - name: gamma\n    provider: local\n";
  ASSERT_TRUE(join({make_cluster("gamma")}, doc).ok());
  auto rows = store->added_clusters().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "gamma");
  EXPECT_EQ(rows[0].source, "gamma.yaml");
  EXPECT_EQ(rows[0].document, doc);
  EXPECT_EQ(rows[0].added_ms, clock.now_ms());

  // A reload's cluster lives in the clusters file: nothing to remember.
  ASSERT_TRUE(join({make_cluster("delta")}).ok());
  EXPECT_EQ(store->added_clusters().value().size(), 1u);
}

}  // namespace
}  // namespace orch::testing
