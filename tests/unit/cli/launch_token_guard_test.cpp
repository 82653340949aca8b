// The CLI inside a job (cli/launch_token_guard.h): an ORCH_TOKEN that is only the job's launch
// token is not sent as an API token, and the CLI says once what to do instead.

#include <gmock/gmock.h>
#include <stdlib.h>

#include <sstream>

#include "cli/launch_token_guard.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

class LaunchTokenGuardTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("ORCH_TOKEN");
    unsetenv("ORCH_LAUNCH_TOKEN");
  }
};

TEST_F(LaunchTokenGuardTest, AnApiTokenIsUsed) {
  setenv("ORCH_TOKEN", "api-secret", 1);
  std::ostringstream warn;
  EXPECT_EQ(api_token_from_env(warn), "api-secret");
  setenv("ORCH_LAUNCH_TOKEN", "orch-7-2-abc", 1);  // in a job given its own API token
  EXPECT_EQ(api_token_from_env(warn), "api-secret");
  EXPECT_EQ(warn.str(), "");
  unsetenv("ORCH_TOKEN");
  EXPECT_EQ(api_token_from_env(warn), "");
}

TEST_F(LaunchTokenGuardTest, TheLaunchTokenIsIgnoredWithOneWarning) {
  setenv("ORCH_TOKEN", "orch-7-2-abc", 1);
  setenv("ORCH_LAUNCH_TOKEN", "orch-7-2-abc", 1);
  std::ostringstream warn;
  EXPECT_EQ(api_token_from_env(warn), "");
  EXPECT_EQ(api_token_from_env(warn), "");
  EXPECT_THAT(warn.str(), HasSubstr("ORCH_TOKEN holds"));
  EXPECT_THAT(warn.str(), HasSubstr("secret_env: {ORCH_TOKEN: {secret: "));
  EXPECT_EQ(warn.str().find("orch-7-2-abc"), std::string::npos);  // no token in the message
  EXPECT_EQ(warn.str().find('\n'), warn.str().size() - 1) << "warned once: " << warn.str();
}

}  // namespace
}  // namespace orch
