// LocalSite::preflight (`orchestrate cluster check`, issue 40): the site's directory writable,
// the agent executable, local.run_as known; each fault named in its own line.
#include <gmock/gmock.h>
#include <unistd.h>

#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

const PreflightCheck* named(const std::vector<PreflightCheck>& checks, const std::string& name) {
  for (const auto& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST_F(LocalSiteTest, APreflightOfASiteSetUpRightPassesEveryCheck) {
  auto checks = site_->preflight();
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(first_failure(checks), nullptr) << checks[0].why << checks[1].why << checks[2].why;
  EXPECT_THAT(named(checks, "storage-root")->why, HasSubstr(root_ + " is writable"));
}

TEST_F(LocalSiteTest, APreflightNamesAMissingAgentAndAStorageRootInTheWay) {
  LocalSiteOptions o = site_->options();
  o.agent_path = root_ + "/no-agent";
  o.root = root_ + "/a-file/site";  // a file where a directory must go
  std::ofstream(root_ + "/a-file") << "x";
  auto checks = LocalSite(o).preflight();
  ASSERT_NE(named(checks, "agent"), nullptr);
  EXPECT_FALSE(named(checks, "agent")->ok);
  EXPECT_THAT(named(checks, "agent")->why, HasSubstr("no-agent"));
  EXPECT_FALSE(named(checks, "storage-root")->ok);
  EXPECT_THAT(named(checks, "storage-root")->why, HasSubstr("a-file/site"));
}

TEST_F(LocalSiteTest, APreflightNamesARunAsUserThatCannotBeUsed) {
  LocalSiteOptions o = site_->options();
  o.run_as = "orch-no-such-user-xyz";
  auto checks = LocalSite(o).preflight();
  EXPECT_FALSE(named(checks, "run-as")->ok);
}

}  // namespace
}  // namespace orch::testing
