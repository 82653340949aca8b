// The launch token's variables (scheduler/model/launch_token.h): ORCH_LAUNCH_TOKEN always, and
// the old name ORCH_TOKEN only while the job does not set that name itself.

#include <gtest/gtest.h>

#include <map>

#include "scheduler/model/launch_token.h"

namespace orch {
namespace {

std::map<std::string, std::string> env_of(const LaunchRequest& r) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : launch_token_env(r)) out[k] = v;
  return out;
}

LaunchRequest request() {
  LaunchRequest r;
  r.token = "orch-7-2-abc";
  return r;
}

TEST(LaunchTokenEnv, BothNamesCarryTheLaunchToken) {
  EXPECT_EQ(env_of(request()),
            (std::map<std::string, std::string>{{"ORCH_LAUNCH_TOKEN", "orch-7-2-abc"},
                                                {"ORCH_TOKEN", "orch-7-2-abc"}}));
}

TEST(LaunchTokenEnv, AJobsOwnOrchTokenIsLeftToIt) {
  LaunchRequest in_env = request();
  in_env.env["ORCH_TOKEN"] = "api-token";
  EXPECT_EQ(env_of(in_env),
            (std::map<std::string, std::string>{{"ORCH_LAUNCH_TOKEN", "orch-7-2-abc"}}));

  LaunchRequest in_secret = request();
  in_secret.secret_refs["ORCH_TOKEN"] = "ci-token";  // resolved into secret_env at launch
  EXPECT_EQ(env_of(in_secret).count("ORCH_TOKEN"), 0u);
  LaunchRequest resolved = request();
  resolved.secret_env["ORCH_TOKEN"] = "the value";
  EXPECT_EQ(env_of(resolved).count("ORCH_TOKEN"), 0u);
}

}  // namespace
}  // namespace orch
