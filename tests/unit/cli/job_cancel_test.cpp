// `orchestrate job cancel ID [ID...]` and `job cancel --group G` (issue 42) against a real
// HttpServer over the fake backend: job 1 runs, job 2 has succeeded, every other id is unknown.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/web/cli_server_fixture.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using JobCancel = CliServerTest;

TEST_F(JobCancel, SeveralIdsAreEachCancelledAndARefusalDoesNotStopTheRest) {
  EXPECT_EQ(cli({"--server", options.server, "job", "cancel", "3", "1"}), kExitServerError);
  EXPECT_THAT(out.str(), HasSubstr("cancel requested for job 1"));
  EXPECT_THAT(err.str(), HasSubstr("no job with id 3"));
}

TEST_F(JobCancel, AGroupCancelsEveryJobOfItNotEndedYet) {
  EXPECT_EQ(cli({"--server", options.server, "job", "cancel", "--group", "lr-sweep"}), kExitOk)
      << err.str();
  EXPECT_EQ(backend.last_filter.group, "lr-sweep");
  EXPECT_EQ(out.str(), "cancel requested for job 1 (state: running)\n");  // 2 has succeeded
}

TEST_F(JobCancel, AGroupWhoseJobsHaveAllEndedIsNotAnError) {
  backend.job1_state = "failed";
  EXPECT_EQ(cli({"--server", options.server, "job", "cancel", "--group", "g"}), kExitOk);
  EXPECT_EQ(out.str(), "");
  EXPECT_THAT(err.str(), HasSubstr("every job of group g (2) has ended already"));
}

TEST_F(JobCancel, SeveralIdsAsJsonAreOneArrayOfTheAnswersWithTheRefusalsOnStderr) {
  EXPECT_EQ(cli({"--server", options.server, "-o", "json", "job", "cancel", "1", "3", "1"}),
            kExitServerError);
  const nlohmann::json answers = nlohmann::json::parse(out.str());  // one document
  ASSERT_TRUE(answers.is_array()) << out.str();
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].value("id", 0), 1);
  EXPECT_THAT(err.str(), HasSubstr("no job with id 3"));
}

TEST_F(JobCancel, OneIdAsJsonIsTheServersAnswerItself) {
  EXPECT_EQ(cli({"--server", options.server, "-o", "json", "job", "cancel", "1"}), kExitOk);
  EXPECT_TRUE(nlohmann::json::parse(out.str()).is_object()) << out.str();
}

TEST_F(JobCancel, NeitherIdsNorAGroupOrBothIsAUsageError) {
  EXPECT_EQ(cli({"--server", options.server, "job", "cancel"}), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("ID or --group"));
  EXPECT_EQ(cli({"--server", options.server, "job", "cancel", "1", "--group", "g"}), kExitUsage);
  EXPECT_EQ(cli({"--server", options.server, "job", "cancel", "0"}), kExitUsage);
}

}  // namespace
}  // namespace orch
