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

// Whether schema (after its $ref and allOf) is an object whose properties all have a type, and
// whose required list is not empty; objects under arrays and references are held to the same,
// so that a client generator gets a type for every field. why says what is wrong.
bool typed(const json& doc, const json& schema, std::string& why, int depth = 0) {
  if (depth > 8) return true;
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    return typed(doc, doc.at(json::json_pointer(ref.substr(1))), why, depth + 1);
  }
  if (schema.contains("allOf")) {
    for (const json& part : schema["allOf"]) {
      if (!typed(doc, part, why, depth + 1)) return false;
    }
    return true;
  }
  if (schema.value("type", json()) != "object" || !schema.contains("properties") ||
      schema.value("required", json::array()).empty()) {
    why = "a bare object: " + schema.dump();
    return false;
  }
  for (const auto& [name, p] : schema["properties"].items()) {
    if (!p.contains("type") && !p.contains("$ref") && !p.contains("enum") && !p.contains("const") &&
        !p.contains("oneOf")) {
      why = "property " + name + " has no type";
      return false;
    }
    const json& items = p.value("items", json::object());
    if (p.contains("$ref") || items.contains("$ref")) {
      if (!typed(doc, p.contains("$ref") ? p : items, why, depth + 1)) {
        why = name + ": " + why;
        return false;
      }
    }
  }
  return true;
}

TEST_F(OpenApi, TheMainReadsAnswerObjectsTypedFieldByField) {
  const json d = served();
  for (const char* route :
       {"/api/v1/jobs", "/api/v1/jobs/{id}", "/api/v1/clusters", "/api/v1/clusters/{name}/nodes",
        "/api/v1/nodes", "/api/v1/data/transfers", "/api/v1/data/transfers/{id}",
        "/api/v1/data/datasets", "/api/v1/reports/providers", "/healthz",
        "/api/v1/jobs/{id}/explain"}) {
    const json& schema =
        d["paths"][route]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
    std::string why;
    EXPECT_TRUE(typed(d, schema, why)) << "GET " << route << ": " << why;
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
