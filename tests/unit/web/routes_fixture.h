#pragma once
// The REST routes over the fake backend, without sockets: what every route test shares. A
// request goes through handle_api as the HTTP server would hand it over; errors are checked as
// the problem+json documents the API promises (docs/rest-api.md).

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/unit/web/fake_backend.h"
#include "web/api_routes.h"

namespace orch::testing {

class RoutesFixture : public ::testing::Test {
 protected:
  HttpResponse call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "application/json") {
    return handle_api(backend, make_request(method, target, body, type));
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
  FakeBackend backend;
};

}  // namespace orch::testing
