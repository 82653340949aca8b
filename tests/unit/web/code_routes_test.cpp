// The code routes (web/code_routes.h, issue 40): a workdir archive asked for and uploaded, over
// a fake store; and the submit route passing the archive a request names on to the backend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/unit/web/routes_fixture.h"
#include "web/code_routes.h"

namespace orch::testing {
namespace {

const std::string kHash(64, 'a');

// Archives by hash, and who uploaded each; "tar" bodies are whatever the test sends.
class FakeCodeApi final : public CodeApi {
 public:
  Result<nlohmann::json> find_code(const std::string& sha256, const std::string& user) override {
    if (!uploaders[sha256].count(user)) return make_error(ErrorKind::not_found, "no archive");
    return nlohmann::json{{"sha256", sha256}, {"bytes", archives[sha256].size()}};
  }
  Result<nlohmann::json> put_code(const std::string& sha256, const std::string& archive,
                                  const std::string& user) override {
    if (archive == "hostile") return make_error(ErrorKind::invalid, "the member \"../x\" ...");
    archives[sha256] = archive;
    uploaders[sha256].insert(user);
    ++puts;
    return nlohmann::json{{"sha256", sha256}, {"bytes", archive.size()}};
  }
  std::map<std::string, std::string> archives;
  std::map<std::string, std::set<std::string>> uploaders;
  int puts = 0;
};

class CodeRoutesTest : public RoutesFixture {
 protected:
  HttpResponse code_call(const std::string& method, const std::string& target,
                         const std::string& body = "", const std::string& type = "",
                         const std::string& caller = "alice") {
    Router router;
    add_rows(router, code_routes(&code));
    HttpRequest request = make_request(method, target, body, type);
    request.caller = caller;
    return router.dispatch(request);
  }
  FakeCodeApi code;
};

TEST_F(CodeRoutesTest, AnArchiveIsUploadedThenFoundByItsUploaderOnly) {
  expect_problem(code_call("GET", "/api/v1/code/" + kHash), 404);
  auto put = code_call("PUT", "/api/v1/code/" + kHash, "tarbytes", "application/x-tar");
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(parsed(put)["bytes"], 8);
  EXPECT_EQ(code.archives[kHash], "tarbytes");
  auto got = code_call("GET", "/api/v1/code/" + kHash);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(parsed(got)["sha256"], kHash);
  expect_problem(code_call("GET", "/api/v1/code/" + kHash, "", "", "bob"), 404);
}

TEST_F(CodeRoutesTest, ABadHashOrContentTypeIsRefusedBeforeTheStore) {
  expect_problem(code_call("GET", "/api/v1/code/ABC"), 400, "64 lowercase hex");
  expect_problem(code_call("PUT", "/api/v1/code/" + std::string(64, 'A'), "x", "application/x-tar"),
                 400, "64 lowercase hex");
  expect_problem(code_call("PUT", "/api/v1/code/" + kHash, "x", "application/json"), 415,
                 "application/x-tar");
  EXPECT_EQ(code.puts, 0);
}

TEST_F(CodeRoutesTest, ARefusedArchiveIs422WithTheReason) {
  expect_problem(code_call("PUT", "/api/v1/code/" + kHash, "hostile", "application/x-tar"), 422,
                 "\"../x\"");
}

TEST_F(CodeRoutesTest, WithoutAStoreTheRoutesAnswer501) {
  Router router;
  add_rows(router, code_routes(nullptr));
  expect_problem(router.dispatch(make_request("GET", "/api/v1/code/" + kHash)), 501,
                 "keeps no workdir archives");
}

TEST_F(CodeRoutesTest, ASubmitPassesTheNamedArchiveToTheBackend) {
  auto r = call("POST", "/api/v1/jobs?source=a.yaml&workdir=sha256:" + kHash, "name: a\n",
                "application/yaml");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(backend.last_submitter.workdir_sha256, kHash);
  r = call("POST", "/api/v1/jobs?source=a.yaml", "name: a\n", "application/yaml");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(backend.last_submitter.workdir_sha256, "");
  expect_problem(call("POST", "/api/v1/jobs?workdir=" + kHash, "name: a\n", "application/yaml"),
                 400, "sha256:");
  expect_problem(call("POST", "/api/v1/jobs?workdir=sha256:xyz", "name: a\n", "application/yaml"),
                 400, "64 lowercase hex");
}

}  // namespace
}  // namespace orch::testing
