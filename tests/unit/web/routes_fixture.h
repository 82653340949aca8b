#pragma once
// The REST routes over the fake backend, without sockets: what every route test shares. A
// request goes through handle_api as the HTTP server would hand it over; errors are checked as
// the problem+json documents the API promises (docs/rest-api.md). The tests of one routes file
// that needs no other route may take only that file's routes over its own fake (RoutesOver).

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/web/fake_backend.h"
#include "web/api_routes.h"
#include "web/data_routes.h"
#include "web/router.h"

namespace orch::testing {

// Every route over every fake, through handle_api.
inline HttpResponse answer_with(FakeBackend& backend, const HttpRequest& request) {
  return handle_api(backend, request);
}
// The data routes alone over their fake.
inline HttpResponse answer_with(FakeDataApi& backend, const HttpRequest& request) {
  Router router;
  add_rows(router, data_routes(backend));
  return router.dispatch(request);
}

// The routes that answer_with(Fake&, ...) binds to `backend`, a Fake.
template <typename Fake>
class RoutesOver : public ::testing::Test {
 protected:
  HttpResponse call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "application/json") {
    return answer_with(backend, make_request(method, target, body, type));
  }
  static nlohmann::json parsed(const HttpResponse& r) { return nlohmann::json::parse(r.body); }
  // A problem+json with this status and a detail containing `needle`.
  static void expect_problem(const HttpResponse& r, int status, const std::string& needle = "") {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(r.content_type, "application/problem+json");
    nlohmann::json p = nlohmann::json::parse(r.body, nullptr, false);
    ASSERT_TRUE(p.is_object()) << r.body;
    EXPECT_EQ(p["type"], "about:blank");
    EXPECT_EQ(p["status"], status);
    EXPECT_EQ(p["title"], status_title(status));
    EXPECT_NE(p["detail"].get<std::string>().find(needle), std::string::npos) << r.body;
  }
  Fake backend;
};

// The whole API over FakeBackend.
class RoutesFixture : public RoutesOver<FakeBackend> {};

}  // namespace orch::testing
