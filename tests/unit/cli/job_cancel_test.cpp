// `orchestrate job cancel ID [ID...]` and `job cancel --group G` (issue 42) against a real
// HttpServer over the fake backend: job 1 runs, job 2 has succeeded, every other id is unknown.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST_F(JobCancel, NeitherIdsNorAGroupOrBothIsAUsageError) {
  EXPECT_EQ(cli({"--server", options.server, "job", "cancel"}), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("ID or --group"));
  EXPECT_EQ(cli({"--server", options.server, "job", "cancel", "1", "--group", "g"}), kExitUsage);
  EXPECT_EQ(cli({"--server", options.server, "job", "cancel", "0"}), kExitUsage);
}

}  // namespace
}  // namespace orch
