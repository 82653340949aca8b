// `job show` says what failed (issue 41, item 6): each failed attempt's error_excerpt under a
// "What failed" heading, line by line; nothing when no attempt failed or the server is older.
#include "cli/job_render.h"

#include <gmock/gmock.h>

#include <sstream>

namespace orch {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

std::string rendered(const json& attempts) {
  std::ostringstream out;
  render_attempts(attempts, out);
  return out.str();
}

TEST(JobRender, EachFailedAttemptsExcerptIsShownUnderItsAttempt) {
  const json attempts = {
      {"attempts",
       {{{"no", 1},
         {"cluster", "east"},
         {"state", "exited"},
         {"cause", "user_error"},
         {"error_excerpt",
          "torchrun: not found\ncommand not found on east-n0 (exit 127): it runs under bash -c"}},
        {{"no", 2}, {"cluster", "east"}, {"state", "running"}, {"error_excerpt", ""}}}}};
  const std::string text = rendered(attempts);
  EXPECT_THAT(text,
              HasSubstr("\nWhat failed\n"
                        "  attempt 1 (user_error):\n"
                        "    torchrun: not found\n"
                        "    command not found on east-n0 (exit 127): it runs under bash -c\n"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("attempt 2 (")));
}

TEST(JobRender, NoFailureNoHeading) {
  const json attempts = {{"attempts",
                          {{{"no", 1}, {"cause", "cancelled"}, {"error_excerpt", ""}},
                           {{"no", 2}, {"cause", "succeeded"}}}}};
  EXPECT_THAT(rendered(attempts), Not(HasSubstr("What failed")));
}

}  // namespace
}  // namespace orch
