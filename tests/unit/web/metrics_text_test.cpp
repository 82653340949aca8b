// GET /metrics' text: Prometheus's exposition format, checked line by line (the e2e test runs
// promtool over a real server's answer).
#include <gmock/gmock.h>

#include "tests/unit/web/fake_backend.h"
#include "web/api_routes.h"
#include "web/metrics_text.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

TEST(MetricsText, EveryFamilyHasHelpAndTypeAndLabelsAreEscaped) {
  MetricsSnapshot s;
  s.jobs_by_state = {{"running", 2}};
  s.live_jobs = {{7, "a \"b\"\\c\nd", "running", "alpha", 120, std::nullopt, 0.41}};
  s.clusters = {{"alpha", "down", "draining", 16, 4, 2, 3, 12.5}};
  s.transfers = {{5, "alpha", "beta", "running", 100, 400, 2.5e7}};
  s.event_seconds = {{0.001, 0.01}, {3, 5}, 0.042, 6};
  const std::string text = metrics_text(s);
  EXPECT_THAT(text,
              HasSubstr("# HELP orchestrate_jobs Jobs by state.\n# TYPE orchestrate_jobs gauge\n"
                        "orchestrate_jobs{state=\"running\"} 2\n"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "orchestrate_job_step{job=\"7\",name=\"a \\\"b\\\"\\\\c\\nd\",cluster=\"alpha\"} 120\n"));
  EXPECT_THAT(text, HasSubstr("orchestrate_job_mfu_ratio{job=\"7\""));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("orchestrate_job_ettr_ratio{")))
      << "a job without an ETTR has no sample";
  EXPECT_THAT(text, HasSubstr("orchestrate_cluster_gpus{cluster=\"alpha\",use=\"foreign\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("orchestrate_cluster_gpus{cluster=\"alpha\",use=\"free\"} 10\n"))
      << "free is what neither orchestrate nor other tenants hold";
  EXPECT_THAT(text,
              HasSubstr("orchestrate_cluster_site_health{cluster=\"alpha\",health=\"down\"} 1\n"));
  EXPECT_THAT(
      text, HasSubstr("orchestrate_cluster_active{cluster=\"alpha\",admission=\"draining\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("orchestrate_outbox_pending_actions{cluster=\"alpha\"} 3\n"));
  EXPECT_THAT(text,
              HasSubstr("orchestrate_site_last_answer_age_seconds{cluster=\"alpha\"} 12.5\n"));
  EXPECT_THAT(text, HasSubstr("orchestrate_transfer_rate_bytes_per_second{transfer=\"5\",from="
                              "\"alpha\",to=\"beta\"} 25000000\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE orchestrate_brain_event_seconds histogram\n"
                              "orchestrate_brain_event_seconds_bucket{le=\"0.001\"} 3\n"
                              "orchestrate_brain_event_seconds_bucket{le=\"0.01\"} 5\n"
                              "orchestrate_brain_event_seconds_bucket{le=\"+Inf\"} 6\n"
                              "orchestrate_brain_event_seconds_sum 0.042\n"
                              "orchestrate_brain_event_seconds_count 6\n"));
}

TEST(MetricsRoute, AnswersTheTextFormatOrTheBackendsError) {
  testing::FakeBackend backend;
  HttpRequest r;
  r.method = "GET";
  r.path = "/metrics";
  HttpResponse ok = handle_api(backend, r);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(ok.body, HasSubstr("orchestrate_jobs{state=\"succeeded\"} 3\n"));
  backend.fail = make_error(ErrorKind::unreachable, "the database is busy");
  HttpResponse failed = handle_api(backend, r);
  EXPECT_EQ(failed.status, 503);
  EXPECT_THAT(failed.body, HasSubstr("the database is busy"));
}

}  // namespace
}  // namespace orch
