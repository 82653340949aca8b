// GET /metrics on the real server (issue 17): after a job ran, the answer passes Prometheus's
// own linter (`promtool check metrics`, Debian's prometheus package, installed by `make test`)
// and holds the job's totals, the clusters' GPUs and health and each site's last answer.
#include <gmock/gmock.h>

#include <unistd.h>

#include <regex>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

class MetricsE2eTest : public E2eTest {};

TEST_F(MetricsE2eTest, TheFleetAndTheServersHealthPassPromtool) {
  const std::int64_t id = submit(job_yaml("counted", "--steps 20 --step-delay-ms 10"));
  ASSERT_GT(id, 0);
  ASSERT_EQ(wait_final(id)["state"], "succeeded") << describe_job(url_, id);

  // The job's last checkpoint listing may still be in alpha's outbox when the job is final:
  // scrape until the workers have carried out everything.
  HttpResponse r;
  EXPECT_TRUE(eventually([&] {
    r = call(url_, "GET", "/metrics");
    return r.status == 200 &&
           r.body.find("orchestrate_outbox_pending_actions{cluster=\"alpha\"} 0\n") !=
               std::string::npos;
  })) << r.body;
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(r.body, HasSubstr("orchestrate_jobs{state=\"succeeded\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("orchestrate_attempts_ended_total{cause=\"succeeded\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("orchestrate_cluster_gpus{cluster=\"alpha\",use=\"free\"} 4\n"));
  EXPECT_THAT(
      r.body,
      HasSubstr("orchestrate_cluster_site_health{cluster=\"beta\",health=\"healthy\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("orchestrate_nodes{cluster=\"alpha\",state=\"active\"} 2\n"));
  EXPECT_THAT(r.body, HasSubstr("orchestrate_brain_event_seconds_count "));
  EXPECT_THAT(r.body, HasSubstr("orchestrate_outbox_pending_actions{cluster=\"alpha\"} 0\n"));
  std::smatch age;
  ASSERT_TRUE(std::regex_search(
      r.body, age,
      std::regex("orchestrate_site_last_answer_age_seconds\\{cluster=\"alpha\"\\} ([0-9.e+-]+)")))
      << r.body;
  EXPECT_LT(std::stod(age[1]), 10.0) << "alpha is polled every 50 ms";

  // A scraper without a token is refused like any other caller.
  EXPECT_EQ(call_as(url_, "", "GET", "/metrics").status, 401);

  ASSERT_EQ(::access("/usr/bin/promtool", X_OK), 0)
      << "promtool is missing: `make test` installs it (Debian's prometheus package)";
  const std::string file = dir_->path() + "/metrics.txt";
  write_file(file, r.body);
  ProcessResult lint =
      run_process({"/bin/sh", "-c", "promtool check metrics < \"$0\"", file}, milliseconds(30000));
  EXPECT_EQ(lint.exit_code, 0) << lint.output << "\n" << r.body;
}

}  // namespace
}  // namespace orch::e2e
