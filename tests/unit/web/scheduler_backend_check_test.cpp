// The real backend's `cluster check` (POST /api/v1/clusters/{name}/check): the preflight runs on
// the cluster's port now, its checks come back line by line, and the brain is told: a failed
// check becomes the cluster's message, a passing one clears it.
#include <gmock/gmock.h>

#include "tests/harness/builders.h"
#include "tests/harness/fake_site.h"
#include "tests/unit/web/backend_fixture.h"

namespace orch {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::make_cluster;

class SchedulerBackendCheckTest : public BackendFixture {
 protected:
  void SetUp() override {
    const ClusterSpec alpha = make_cluster("alpha");
    open({alpha});
    backend_->cluster_joined(alpha, &site_);
    loop_->start();
  }
  void TearDown() override { loop_->stop(); }
  std::string message() { return store_->cluster("alpha").value()->message; }

  testing::FakeSite site_;
};

TEST_F(SchedulerBackendCheckTest, ACheckRunsThePreflightAndTellsTheBrain) {
  site_.preflight_checks = {check_passed("port", "login:22 answers"),
                            check_failed("partition", "partition gpux does not exist")};
  auto r = backend_->check_cluster("alpha");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["ok"], false);
  EXPECT_EQ((*r)["reason"],
            "cluster alpha misconfigured: partition: partition gpux does not exist");
  EXPECT_EQ((*r)["checks"][1], json({{"name", "partition"},
                                     {"ok", false},
                                     {"skipped", false},
                                     {"why", "partition gpux does not exist"}}));
  EXPECT_EQ(site_.preflight_calls, 1);
  EXPECT_THAT(message(), HasSubstr("misconfigured: partition"));

  site_.preflight_checks = {check_passed("partition", "gpu exists")};
  r = backend_->check_cluster("alpha");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["ok"], true);
  EXPECT_EQ((*r)["reason"], "");
  EXPECT_EQ(message(), "");
}

TEST_F(SchedulerBackendCheckTest, AnUnknownClusterIsNotFound) {
  auto r = backend_->check_cluster("zeta");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  EXPECT_EQ(site_.preflight_calls, 0);
}

}  // namespace
}  // namespace orch
