// What the guard refuses before any route runs (a browser's cross-site request, DNS rebinding,
// a request without a token) changes nothing, and every answer carries the browser headers.
#include <gmock/gmock.h>

#include "tests/unit/access/access_fixture.h"
#include "web/access/access_guard.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

const std::string kJob = "name: x\ncommand: c\n";

TEST_F(AccessFixture, ACrossSiteTextPlainPostIsRefusedAndSubmitsNothing) {
  const HttpResponse r = send("POST", "/api/v1/jobs", Role::admin, kJob, "text/plain");
  EXPECT_EQ(r.status, 415) << r.body;
  EXPECT_THAT(r.body, HasSubstr("application/json or application/yaml"));
  EXPECT_TRUE(backend.last_body.empty());
  EXPECT_EQ(audit_rows(1).at(0).result, "refused");
}

TEST_F(AccessFixture, FormPostsAreRefused) {
  for (const char* type : {"application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                           "text/plain; charset=utf-8"}) {
    const HttpResponse r = send("POST", "/api/v1/jobs", Role::admin, "name=x", type);
    EXPECT_EQ(r.status, 415) << type;
  }
  EXPECT_TRUE(backend.last_body.empty());
}

TEST_F(AccessFixture, AForeignHostHeaderIsRefusedEvenWithAToken) {
  HttpRequest r = request("POST", "/api/v1/jobs", tokens.at(Role::admin), kJob, "application/yaml");
  r.headers["host"] = "attacker.example:8080";  // DNS rebinding: their name, our address
  const HttpResponse answer = api->handle(r);
  EXPECT_EQ(answer.status, 421) << answer.body;
  EXPECT_TRUE(backend.last_body.empty());
  HttpRequest read = request("GET", "/api/v1/jobs", tokens.at(Role::admin));
  read.headers["host"] = "attacker.example";
  EXPECT_EQ(api->handle(read).status, 421);
  read.headers.erase("host");
  EXPECT_EQ(api->handle(read).status, 400);
}

TEST_F(AccessFixture, TheNamesTheServerAnswersToPass) {
  for (const char* host : {"127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]:8080"}) {
    HttpRequest r = request("GET", "/api/v1/jobs", tokens.at(Role::viewer));
    r.headers["host"] = host;
    EXPECT_EQ(api->handle(r).status, 200) << host;
  }
  GuardedApi named(backend, *store,
                   GuardOptions{answered_hosts("0.0.0.0", {"orch.example.com"}), ""});
  HttpRequest r = request("GET", "/api/v1/jobs", tokens.at(Role::viewer));
  r.headers["host"] = "orch.example.com:443";
  EXPECT_EQ(named.handle(r).status, 200);
  r.headers["host"] = "0.0.0.0:8080";
  EXPECT_EQ(named.handle(r).status, 421);
}

TEST_F(AccessFixture, ACookieIsNoCredential) {
  HttpRequest r = request("POST", "/api/v1/jobs", "", kJob, "application/yaml");
  r.headers["cookie"] = "token=" + tokens.at(Role::admin);
  const HttpResponse answer = api->handle(r);
  EXPECT_EQ(answer.status, 401);
  EXPECT_EQ(answer.header("WWW-Authenticate"), "Bearer realm=\"orchestrate\"");
  EXPECT_TRUE(backend.last_body.empty());
}

TEST_F(AccessFixture, AMalformedOrUnknownTokenIs401) {
  for (const std::string& value :
       {std::string("Bearer "), std::string("Basic YWRtaW46YWRtaW4="),
        std::string("Bearer orch_00"), "Bearer " + tokens.at(Role::admin) + "x",
        std::string("Bearer \xff\xfe")}) {
    HttpRequest r = request("GET", "/api/v1/jobs", "");
    r.headers["authorization"] = value;
    EXPECT_EQ(api->handle(r).status, 401) << value;
  }
}

TEST_F(AccessFixture, EveryAnswerCarriesTheBrowserSafetyHeaders) {
  for (const HttpResponse& r :
       {send("GET", "/api/v1/jobs", Role::viewer), api->handle(request("GET", "/api/v1/jobs", "")),
        api->handle(request("GET", "/healthz", ""))}) {
    EXPECT_EQ(r.header("X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(r.header("Content-Security-Policy"), "default-src 'none'; frame-ancestors 'none'");
    EXPECT_EQ(r.header("Cache-Control"), "no-store");
    EXPECT_EQ(r.header("Access-Control-Allow-Origin"), "");  // no CORS, wildcard or otherwise
  }
}

TEST_F(AccessFixture, TheHealthProbeNeedsNoTokenAndNamesTheTokenFileOnlyToThisMachine) {
  GuardedApi with_file(backend, *store,
                       GuardOptions{answered_hosts("127.0.0.1", {}), "/state/admin.token"});
  HttpRequest local = request("GET", "/healthz", "");
  EXPECT_THAT(with_file.handle(local).body, HasSubstr("/state/admin.token"));
  HttpRequest remote = local;
  remote.remote = "10.1.2.3";
  const HttpResponse r = with_file.handle(remote);
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, ::testing::Not(HasSubstr("token_file")));
}

TEST_F(AccessFixture, AnUnknownRouteAsksForATokenBeforeSayingItIsUnknown) {
  EXPECT_EQ(api->handle(request("GET", "/api/v1/secret-things", "")).status, 401);
  EXPECT_EQ(send("GET", "/api/v1/secret-things", Role::viewer).status, 404);
}

TEST(JudgeBind, LoopbackAlwaysAndAnyOtherAddressOnlyOverTlsOrWhenToldTo) {
  EXPECT_TRUE(judge_bind("127.0.0.1", false, false).ok);
  EXPECT_TRUE(judge_bind("127.0.0.1", false, false).message.empty());
  EXPECT_TRUE(judge_bind("::1", false, false).ok);
  const BindVerdict plain = judge_bind("0.0.0.0", false, false);
  EXPECT_FALSE(plain.ok);
  EXPECT_THAT(plain.message, HasSubstr("refusing to serve on 0.0.0.0 without TLS"));
  EXPECT_THAT(plain.message, HasSubstr("server.tls: {cert, key}"));
  EXPECT_THAT(plain.message, HasSubstr("--insecure-bind"));
  const BindVerdict tls = judge_bind("0.0.0.0", true, false);
  EXPECT_TRUE(tls.ok);
  EXPECT_TRUE(tls.message.empty()) << "TLS needs no warning";
  const BindVerdict told = judge_bind("10.0.0.5", false, true);
  EXPECT_TRUE(told.ok);
  EXPECT_THAT(told.message, HasSubstr("without TLS (--insecure-bind)"));
}

}  // namespace
}  // namespace orch::testing
