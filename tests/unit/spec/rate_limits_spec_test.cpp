// The clusters file's server.rate_limits (issue 37): the defaults, a role set alone, and each
// mistake worded with its file:line:col like the rest of the file.
#include <gmock/gmock.h>

#include "scheduler/spec/clusters_parser.h"

namespace orch {
namespace {

constexpr const char* kClusters = "clusters: [{name: a}]\n";

std::string error_of(const std::string& yaml) {
  auto r = parse_clusters_file(yaml, "clusters.yaml");
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

TEST(RateLimitsSpec, EachRoleHasADefault) {
  auto file = parse_clusters_file(kClusters, "clusters.yaml");
  ASSERT_TRUE(file.ok()) << file.error().message;
  const RateLimits& r = file->server.rate_limits;
  EXPECT_EQ(r.user.per_s, 10);
  EXPECT_EQ(r.user.burst, 40);
  EXPECT_EQ(r.operator_.per_s, 20);
  EXPECT_EQ(r.operator_.burst, 80);
  EXPECT_EQ(r.admin.per_s, 50);
  EXPECT_EQ(r.admin.burst, 200);
}

TEST(RateLimitsSpec, ARoleSetAloneLeavesTheOthersTheirDefaults) {
  auto file = parse_clusters_file(
      "server:\n  rate_limits:\n    user: {per_s: 0.5, burst: 5}\n    admin: {burst: 1000}\n" +
          std::string(kClusters),
      "clusters.yaml");
  ASSERT_TRUE(file.ok()) << file.error().message;
  const RateLimits& r = file->server.rate_limits;
  EXPECT_EQ(r.user.per_s, 0.5);
  EXPECT_EQ(r.user.burst, 5);
  EXPECT_EQ(r.operator_.per_s, 20);
  EXPECT_EQ(r.admin.per_s, 50);
  EXPECT_EQ(r.admin.burst, 1000);
}

TEST(RateLimitsSpec, EachMistakeSaysWhereAndWhat) {
  const struct {
    std::string yaml;
    std::string where;
    std::string what;
  } cases[] = {
      {"server: {rate_limits: {usr: {per_s: 1}}}\n",
       "clusters.yaml:1:24:", "unknown key \"usr\" in server.rate_limits; did you mean \"user\"?"},
      {"server: {rate_limits: {viewer: {per_s: 1}}}\n",
       "clusters.yaml:1:24:", "unknown key \"viewer\" in server.rate_limits"},
      {"server: {rate_limits: 10}\n", "clusters.yaml:1:23:", "server.rate_limits must be a map"},
      {"server: {rate_limits: {user: {per_s: 0}}}\n",
       "clusters.yaml:1:38:", "\"per_s\" must be a number > 0"},
      {"server: {rate_limits: {user: {per_s: -1}}}\n", "clusters.yaml:1:38:", "\"per_s\""},
      {"server: {rate_limits: {user: {per_s: fast}}}\n", "clusters.yaml:1:38:", "\"per_s\""},
      {"server: {rate_limits: {admin: {burst: 0}}}\n", "clusters.yaml:1:39:", "\"burst\""},
      {"server: {rate_limits: {admin: {burst: 2.5}}}\n", "clusters.yaml:1:39:", "\"burst\""},
      {"server: {rate_limits: {operator: {burst: 10, rate: 3}}}\n",
       "clusters.yaml:1:46:", "unknown key \"rate\" in server.rate_limits.operator"},
      {"server: {rate_limits: {user: 10}}\n",
       "clusters.yaml:1:30:", "server.rate_limits.user must be a map"},
  };
  for (const auto& c : cases) {
    const std::string error = error_of(c.yaml + kClusters);
    EXPECT_EQ(error.rfind(c.where, 0), 0u) << c.yaml << " -> " << error;
    EXPECT_THAT(error, ::testing::HasSubstr(c.what)) << c.yaml;
  }
}

}  // namespace
}  // namespace orch
