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

// Issue 42: advice from priors is labelled, ETTR has three digits, and an attempt that never
// launched says so and why.
json advice(const std::string& basis, double ettr) {
  return {{"cluster", "east"},
          {"basis", basis},
          {"interval_s", 20785},
          {"checkpoint_cost_s", 60},
          {"job_mtbf_h", 1000},
          {"ettr", ettr},
          {"restart_s", 300},
          {"expected_mfu", 0.35},
          {"around", {{{"interval_s", 31}, {"ettr", 0.9995}}, {{"interval_s", 61}, {"ettr", 1}}}}};
}

TEST(JobRender, AdviceFromPriorsIsLabelledAndEttrHasThreeDigits) {
  std::ostringstream plan;
  render_plan({{"id", 1}, {"name", "j"}, {"checkpoint_advice", advice("prior", 0.9995)}}, plan);
  EXPECT_THAT(plan.str(), HasSubstr("checkpoint every 20785 s (Young: 60 s checkpoint cost, MTBF "
                                    "1000 h on east), prior (no measurements yet)\n"));
  EXPECT_THAT(plan.str(), HasSubstr("31          -      0.999"));
  EXPECT_THAT(plan.str(), HasSubstr("61          -      1.000"));

  std::ostringstream show;
  render_job({{"id", 1}, {"checkpoint_advice", advice("measured", 0.99)}},
             {{"attempts", json::array()}}, {{"events", json::array()}}, show);
  EXPECT_THAT(show.str(), HasSubstr("on east)\n"));
  EXPECT_THAT(show.str(), Not(HasSubstr("prior")));
  EXPECT_THAT(show.str(), HasSubstr("  expected ETTR    0.999 at 31 s, 1.000 at 61 s\n"));
}

// Issue 45: the renewal formula's best interval names Young's beside it, the table shows the
// first order beside each ETTR, and an MTBF that is mostly prior says on how many hours.
TEST(JobRender, AdviceNamesYoungsIntervalAndWhatItsMtbfStandsOn) {
  json a = advice("measured", 0.95);
  a["young_interval_s"] = 21000;
  a["mtbf_basis"] = "mostly prior";
  a["evidence_node_hours"] = 0.0144;
  a["node_failures"] = 3;
  a["prior_node_hours"] = 500;
  a["around"] = {{{"interval_s", 20785}, {"ettr", 0.95}, {"ettr_first_order", 0.94}}};
  std::ostringstream plan;
  render_plan({{"id", 1}, {"name", "j"}, {"checkpoint_advice", a}}, plan);
  EXPECT_THAT(plan.str(), HasSubstr("checkpoint every 20785 s (renewal; Young's 21000 s: 60 s "
                                    "checkpoint cost, MTBF 1000 h on east), MTBF mostly prior: "
                                    "0.01 node-hours observed (3 failures) against the prior's "
                                    "500\n"));
  EXPECT_THAT(plan.str(), HasSubstr("FIRST ORDER"));
  EXPECT_THAT(plan.str(), HasSubstr("0.950          0.940        <- best interval"));
}

TEST(JobRender, AnAttemptThatNeverLaunchedSaysWhy) {
  const json attempts = {
      {"attempts",
       {{{"no", 2}, {"cause", "cancelled"}, {"not_launched", "its checkpoint at step 20 was gone"}},
        {{"no", 3}, {"cause", "succeeded"}, {"not_launched", ""}}}}};
  const std::string text = rendered(attempts);
  EXPECT_THAT(text, HasSubstr("not launched"));
  EXPECT_THAT(text, HasSubstr("  attempt 2 not launched: its checkpoint at step 20 was gone\n"));
  EXPECT_THAT(text, Not(HasSubstr("attempt 3 not launched")));
}

}  // namespace
}  // namespace orch
