// The support record (issue 15) through the real server: a ticket opened with the CLI, answered
// by the provider over REST and closed with the CLI appears in `report providers` with its times.
#include <gmock/gmock.h>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

class TicketsE2eTest : public E2eTest {};

TEST_F(TicketsE2eTest, ATicketsTimesAppearInTheProviderReport) {
  // Its node is named only once the site has listed it.
  ASSERT_TRUE(
      eventually([&] { return !get_json(url_, "/api/v1/clusters/alpha/nodes")["nodes"].empty(); }));
  ProcessResult opened =
      cli({"ticket", "open", "alpha", "alpha-n1 drops its IB link", "--node", "alpha-n1"});
  ASSERT_EQ(opened.exit_code, 0) << opened.output;
  EXPECT_THAT(opened.output, HasSubstr("opened ticket 1 with alpha's provider"));

  std::this_thread::sleep_for(milliseconds(300));
  HttpResponse answered = call(url_, "POST", "/api/v1/tickets/1/updates",
                               R"({"text": "replacing the cable", "from_provider": true})");
  ASSERT_EQ(answered.status, 200) << answered.body;
  std::this_thread::sleep_for(milliseconds(300));
  ProcessResult closed = cli({"ticket", "close", "1", "--resolution", "cable replaced"});
  ASSERT_EQ(closed.exit_code, 0) << closed.output;

  const json t = get_json(url_, "/api/v1/tickets/1");
  const double response_h =
      (t["first_response_ms"].get<double>() - t["opened_ms"].get<double>()) / 3.6e6;
  const double resolution_h =
      (t["resolved_ms"].get<double>() - t["opened_ms"].get<double>()) / 3.6e6;
  EXPECT_GT(response_h, 0);
  EXPECT_GT(resolution_h, response_h);
  EXPECT_EQ(t["history"].size(), 3u) << t.dump();

  const json report = get_json(url_, "/api/v1/reports/providers");
  json alpha;
  for (const auto& c : report["cards"]) {
    if (c["name"] == "alpha") alpha = c;
  }
  ASSERT_TRUE(alpha.is_object()) << report.dump();
  EXPECT_EQ(alpha["tickets"], 1);
  EXPECT_EQ(alpha["open_tickets"], 0);
  EXPECT_NEAR(alpha["ticket_response_median_h"].get<double>(), response_h, 1e-9);
  EXPECT_NEAR(alpha["ticket_resolution_median_h"].get<double>(), resolution_h, 1e-9);
  ProcessResult shown = cli({"report", "providers"});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_THAT(shown.output, HasSubstr("TICKETS  RESPONSE_H  RESOLVE_H"));
  EXPECT_THAT(shown.output, HasSubstr("0/1"));
}

}  // namespace
}  // namespace orch::e2e
