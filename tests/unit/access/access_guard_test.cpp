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
  GuardedApi named(backend, *store, GuardOptions{answered_hosts("0.0.0.0", {"orch.example.com"})});
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

TEST_F(AccessFixture, TheHealthProbeNeedsNoTokenAndNamesNoFileToAnyone) {
  for (const char* from : {"127.0.0.1", "10.1.2.3"}) {
    HttpRequest r = request("GET", "/healthz", "");
    r.remote = from;
    const HttpResponse answer = api->handle(r);
    EXPECT_EQ(answer.status, 200) << from;
    EXPECT_THAT(answer.body, ::testing::Not(HasSubstr("token")));
    EXPECT_THAT(answer.body, ::testing::Not(HasSubstr("/")));
  }
}

TEST_F(AccessFixture, ATokensTeamsReachTheSubmitterAndAUserActsOnlyForThem) {
  auto made = store->create_token("vera", Role::user, "ada", {"vision", "nlp"});
  ASSERT_TRUE(made.ok());
  HttpResponse r =
      api->handle(request("POST", "/api/v1/jobs", *made, "name: x\n", "application/yaml"));
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(backend.last_submitter.user, "vera");
  EXPECT_FALSE(backend.last_submitter.any_team);
  EXPECT_EQ(backend.last_submitter.teams, (std::vector<std::string>{"vision", "nlp"}));
  send("POST", "/api/v1/jobs", Role::operator_, "name: x\n", "application/yaml");
  EXPECT_TRUE(backend.last_submitter.any_team) << "an operator acts for any team";
  const HttpResponse who = api->handle(request("GET", "/api/v1/whoami", *made));
  EXPECT_THAT(who.body, HasSubstr(R"("teams":["vision","nlp"])"));
}

TEST_F(AccessFixture, ATokenIsMadeWithTeamsThroughTheApi) {
  HttpResponse made = send("POST", "/api/v1/tokens", Role::admin,
                           R"({"name": "nina", "role": "user", "teams": ["nlp"]})");
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_THAT(made.body, HasSubstr(R"("teams":["nlp"])"));
  EXPECT_EQ(send("POST", "/api/v1/tokens", Role::admin,
                 R"({"name": "nick", "role": "user", "teams": "nlp"})")
                .status,
            422);
  const HttpResponse list = send("GET", "/api/v1/tokens", Role::admin);
  EXPECT_THAT(list.body, HasSubstr(R"("teams":["nlp"])"));
}

TEST_F(AccessFixture, SecretsAreListedToAnyTokenAndChangedOnlyByAnAdminNeverShowingAValue) {
  const std::string body = R"({"value_base64": "aGYtdmFsdWU=", "teams": ["nlp"]})";
  EXPECT_EQ(send("PUT", "/api/v1/secrets/hf", Role::operator_, body).status, 403);
  const HttpResponse set = send("PUT", "/api/v1/secrets/hf", Role::admin, body);
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(backend.secrets.at("hf").value, "hf-value");
  EXPECT_EQ(backend.secrets.at("hf").by, "ada");
  const HttpResponse list = send("GET", "/api/v1/secrets", Role::viewer);
  EXPECT_EQ(list.status, 200);
  EXPECT_THAT(list.body, HasSubstr(R"("name":"hf")"));
  EXPECT_THAT(list.body, ::testing::Not(HasSubstr("hf-value")));
  EXPECT_THAT(list.body, ::testing::Not(HasSubstr("aGYtdmFsdWU")));
  EXPECT_EQ(
      send("POST", "/api/v1/secrets/hf/grant", Role::admin, R"({"teams": ["vision"]})").status,
      200);
  EXPECT_EQ(backend.secrets.at("hf").teams, (std::vector<std::string>{"vision"}));
  EXPECT_EQ(send("DELETE", "/api/v1/secrets/hf", Role::user).status, 403);
  EXPECT_EQ(send("DELETE", "/api/v1/secrets/hf", Role::admin).status, 200);
  EXPECT_EQ(send("DELETE", "/api/v1/secrets/hf", Role::admin).status, 404);
  EXPECT_EQ(send("PUT", "/api/v1/secrets/from-file", Role::admin, body).status, 409);
}

TEST_F(AccessFixture, ASecretBodyMustGiveExactlyOneValue) {
  for (const char* bad :
       {R"({"teams": []})", R"({"value": "a", "value_base64": "YQ=="})",
        R"({"value_base64": "***"})", R"({"value": 7})", R"({"value": "a", "teams": "nlp"})"}) {
    EXPECT_EQ(send("PUT", "/api/v1/secrets/x", Role::admin, bad).status, 422) << bad;
  }
  EXPECT_EQ(send("POST", "/api/v1/secrets/from-file/grant", Role::admin, R"({})").status, 422);
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
