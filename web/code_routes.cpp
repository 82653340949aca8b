#include "web/code_routes.h"

#include "web/route_helpers.h"

namespace orch {
namespace {

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<HttpResponse> bad_hash(const std::string& sha256) {
  if (is_sha256_hex(sha256)) return std::nullopt;
  return problem_response(400,
                          "{sha256} must be an archive's SHA-256 as 64 lowercase hex "
                          "digits, got " +
                              routes::shown(sha256));
}

// The code store of a server that has none (tests that build the API without one).
class NoCode final : public CodeApi {
 public:
  Result<nlohmann::json> find_code(const std::string&, const std::string&) override {
    return missing();
  }
  Result<nlohmann::json> put_code(const std::string&, const std::string&,
                                  const std::string&) override {
    return missing();
  }

 private:
  static Error missing() {
    return make_error(ErrorKind::unsupported, "this server keeps no workdir archives");
  }
};

HttpResponse put_code(CodeApi& code, const HttpRequest& request, const std::string& sha256) {
  if (auto bad = bad_hash(sha256)) return *bad;
  const std::string type = routes::media_type(request.header("content-type"));
  if (type != "application/x-tar") {
    return problem_response(415, "send the archive as application/x-tar, not " +
                                     routes::shown(type.empty() ? "no Content-Type" : type));
  }
  auto kept = code.put_code(sha256, request.body, request.caller);
  if (!kept) {
    // The body arrived whole: a wrong hash or a refused member is content, hence 422.
    const int status =
        kept.error().kind == ErrorKind::invalid ? 422 : status_for(kept.error().kind);
    return problem_response(status, kept.error().message);
  }
  return json_response(200, *kept);
}

}  // namespace

RouteTable code_routes(CodeApi* code) {
  static NoCode none;
  CodeApi* c = code ? code : &none;
  return {{.method = "GET",
           .path = "/api/v1/code/{sha256}",
           .lane = Lane::read,
           .role = Role::user,
           .tag = "code",
           .summary = "Whether the server holds a workdir archive the caller uploaded",
           .answer_schema = "CodeArchive",
           .errors = {400, 404},
           .handler =
               [c](const HttpRequest& request, const PathParams& p) {
                 const std::string& sha256 = p.at("sha256");
                 if (auto bad = bad_hash(sha256)) return *bad;
                 return routes::answer(c->find_code(sha256, request.caller));
               }},
          {.method = "PUT",
           .path = "/api/v1/code/{sha256}",
           .lane = Lane::command,
           .role = Role::user,
           .tag = "code",
           .summary = "Upload a workdir archive (ustar), named by its SHA-256",
           .body = Body::archive,
           .body_schema = "CodeArchiveBody",
           .answer_schema = "CodeArchive",
           .errors = {400, 413, 422},
           .handler = [c](const HttpRequest& request, const PathParams& p) {
             return put_code(*c, request, p.at("sha256"));
           }}};
}

}  // namespace orch
