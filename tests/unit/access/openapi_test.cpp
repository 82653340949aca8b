// GET /api/v1/openapi.json, built from the server's route table: every row is described and
// nothing else, each operation's errors are problem+json, every reference resolves, the routes
// open to all are the ones the document says need no token, and the main reads answer typed
// objects. (tests/openapi validates the same document with an OpenAPI 3.1 validator.)
#include <gmock/gmock.h>

#include <set>

#include "tests/unit/access/access_fixture.h"
#include "web/openapi.h"

namespace orch::testing {
namespace {

using nlohmann::json;

std::set<std::string> documented(const json& doc) {
  std::set<std::string> out;
  for (const auto& [path, methods] : doc["paths"].items()) {
    for (const auto& [method, op] : methods.items()) {
      std::string m = method;
      for (char& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      out.insert(m + " " + path);
    }
  }
  return out;
}

// Every "$ref" in j, for the resolution check.
void refs(const json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "$ref" && value.is_string()) out.push_back(value.get<std::string>());
      refs(value, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) refs(v, out);
  }
}

class OpenApi : public AccessFixture {
 protected:
  // The document as the server serves it, to anyone.
  json served() const {
    const HttpResponse r = api->handle(request("GET", "/api/v1/openapi.json", ""));
    return json::parse(r.body, nullptr, false);
  }
};

TEST_F(OpenApi, TheDocumentDescribesEveryRowOfTheTableAndNoOther) {
  const std::set<std::string> doc = documented(served());
  std::set<std::string> rows;
  for (const RouteRow& row : api->routes()) rows.insert(row.route());
  EXPECT_EQ(doc, rows);
  EXPECT_EQ(doc.size(), api->router().describe().size());
}

TEST_F(OpenApi, EveryOperationHasItsErrorsAsProblemsAndOpenRoutesNeedNoToken) {
  std::map<std::string, Role> role_of;
  for (const RouteRow& row : api->routes()) role_of[row.route()] = row.role;
  const json d = served();
  EXPECT_EQ(d["openapi"], "3.1.0");
  for (const auto& [path, methods] : d["paths"].items()) {
    for (const auto& [method, op] : methods.items()) {
      std::string m = method;
      for (char& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      const std::string route = m + " " + path;
      ASSERT_TRUE(op.contains("responses")) << route;
      const bool open = role_of.at(route) == Role::open;
      EXPECT_EQ(op.contains("security") && op["security"].empty(), open) << route;
      EXPECT_EQ(op["responses"].contains("401"), !open) << route;
      for (const auto& [status, answer] : op["responses"].items()) {
        if (status[0] == '4' || status[0] == '5') {
          EXPECT_EQ(answer.value("$ref", ""), "#/components/responses/Problem")
              << route << " " << status;
        }
      }
      if (op.contains("requestBody")) {
        EXPECT_TRUE(op["responses"].contains("415")) << route;
      }
      for (const auto& p : op.value("parameters", json::array())) {
        if (p["in"] == "path") {
          EXPECT_NE(path.find("{" + p["name"].get<std::string>() + "}"), std::string::npos)
              << route;
        }
      }
    }
  }
  std::vector<std::string> all;
  refs(d, all);
  EXPECT_GT(all.size(), 50u);
  for (const std::string& r : all) {
    const std::string pointer = r.substr(1);  // "#/components/..." -> "/components/..."
    EXPECT_TRUE(d.contains(json::json_pointer(pointer))) << r << " does not resolve";
  }
}

TEST_F(OpenApi, TheDocumentIsServedToAnyone) {
  const HttpResponse r = api->handle(request("GET", "/api/v1/openapi.json", ""));
  EXPECT_EQ(r.status, 200);
  const json body = json::parse(r.body, nullptr, false);
  ASSERT_TRUE(body.is_object());
  EXPECT_EQ(body["info"]["title"], "orchestrate");
}

}  // namespace
}  // namespace orch::testing
