// POST /api/v1/attempts/{token}/records (web/push_routes.h, issue 44) over the server's real
// store: a batch stored and a retried one not again, each wrong body a 400 that names the field
// and the record, 413 past 256 records or 1 MiB, 410 once the attempt has ended.
#include <string>

#include "tests/unit/server/push_test_util.h"
#include "web/push_routes.h"
#include "web/router.h"

namespace orch::testing {
namespace {

using nlohmann::json;

class PushRouteTest : public PushStoreTest {
 protected:
  HttpResponse post(const std::string& body, const std::string& token = kPushToken) {
    Router router;
    add_rows(router, push_routes(store.get()));
    HttpRequest request =
        make_request("POST", "/api/v1/attempts/" + token + "/records", body, "application/json");
    request.caller = "attempt " + token;
    request.caller_role = "attempt";
    return router.dispatch(request);
  }
  static json records(int from, int to) {
    json out = json::array();
    for (int seq = from; seq <= to; ++seq) {
      out.push_back({{"seq", seq}, {"event", "heartbeat"}, {"at_ms", 1'700'000'000'000 + seq}});
    }
    return out;
  }
  static json answer(const HttpResponse& r) { return json::parse(r.body, nullptr, false); }
  // A 400 whose detail names `field`.
  void expect_400_naming(const json& body, const std::string& field) {
    const HttpResponse r = post(body.dump());
    EXPECT_EQ(r.status, 400) << body.dump() << " -> " << r.body;
    EXPECT_NE(r.body.find(field), std::string::npos) << r.body;
  }
};

TEST_F(PushRouteTest, ABatchIsStoredAndTheSameBatchRetriedIsNotStoredAgain) {
  const std::string body = json{{"rank", 0}, {"node", "n1"}, {"records", records(1, 3)}}.dump();
  const HttpResponse first = post(body);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(answer(first), (json{{"stored", 3}, {"last_seq", 3}}));
  const HttpResponse retried = post(body);
  ASSERT_EQ(retried.status, 200) << retried.body;
  EXPECT_EQ(answer(retried), (json{{"stored", 0}, {"last_seq", 3}}));
  ASSERT_EQ(store->tasks(kPushToken).size(), 1u);
  EXPECT_EQ(store->tasks(kPushToken)[0].node, "n1");
}

TEST_F(PushRouteTest, EachWrongBodyIsA400NamingTheFieldAndTheRecord) {
  EXPECT_EQ(post("not json").status, 400);
  EXPECT_EQ(post("[1, 2]").status, 400);
  expect_400_naming({{"records", records(1, 1)}}, "rank");
  expect_400_naming({{"rank", -1}, {"records", records(1, 1)}}, "rank");
  expect_400_naming({{"rank", 1.5}, {"records", records(1, 1)}}, "rank");
  expect_400_naming({{"rank", 0}, {"node", 7}, {"records", records(1, 1)}}, "node");
  expect_400_naming({{"rank", 0}}, "records");
  expect_400_naming({{"rank", 0}, {"records", {{"seq", 1}}}}, "records");
  json no_seq = records(1, 2);
  no_seq[1].erase("seq");
  expect_400_naming({{"rank", 0}, {"records", no_seq}}, "records[1].seq");
  json falling = records(1, 3);
  falling[2]["seq"] = 2;
  expect_400_naming({{"rank", 0}, {"records", falling}}, "records[2].seq");
  json no_event = records(1, 1);
  no_event[0]["event"] = "";
  expect_400_naming({{"rank", 0}, {"records", no_event}}, "records[0].event");
  json no_time = records(1, 1);
  no_time[0]["at_ms"] = "now";
  expect_400_naming({{"rank", 0}, {"records", no_time}}, "records[0].at_ms");
  EXPECT_TRUE(store->tasks(kPushToken).empty()) << "nothing of a refused batch is stored";
}

TEST_F(PushRouteTest, MoreThan256RecordsOrOneMebibyteIs413) {
  EXPECT_EQ(post(json{{"rank", 0}, {"records", records(1, 256)}}.dump()).status, 200);
  const HttpResponse many = post(json{{"rank", 0}, {"records", records(1, 257)}}.dump());
  EXPECT_EQ(many.status, 413) << many.body;
  json big = records(1, 1);
  big[0]["line"] = std::string(kMaxPushBytes, 'x');
  EXPECT_EQ(post(json{{"rank", 0}, {"records", big}}.dump()).status, 413);
}

TEST_F(PushRouteTest, AnEndedAttemptIsGoneSoItsAgentStopsPushing) {
  lives[kPushToken] = AttemptLife::ended;
  const HttpResponse r = post(json{{"rank", 0}, {"records", records(1, 1)}}.dump());
  EXPECT_EQ(r.status, 410) << r.body;
  EXPECT_NE(r.body.find("stop pushing"), std::string::npos) << r.body;
  EXPECT_EQ(post(json{{"rank", 0}, {"records", records(1, 1)}}.dump(), "orch-unknown").status, 410);
}

}  // namespace
}  // namespace orch::testing
