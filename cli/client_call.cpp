// The shared REST call of the client commands (client_call.h).
#include "cli/client_call.h"

#include "cli/client_token.h"
#include "cli/spec_file.h"
#include "cli/spec_overrides.h"
#include "cli/workdir_upload.h"
#include "web/http/http_client.h"
#include "web/http/http_server.h"

namespace orch {
namespace {

using nlohmann::json;

// The exit code for a failed call; prints "error: ..." on err.
int report(const Error& error, std::ostream& err) {
  err << "error: " << error.message << '\n';
  if (error.kind == ErrorKind::invalid) return kExitUsage;
  return error.kind == ErrorKind::unreachable ? kExitUnreachable : kExitServerError;
}

std::string problem_detail(const HttpResponse& response) {
  json body = json::parse(response.body, nullptr, false);
  if (body.is_object() && body.contains("detail") && body["detail"].is_string()) {
    return body["detail"].get<std::string>();
  }
  std::string text = response.body.substr(0, 200);
  return "the server answered HTTP " + std::to_string(response.status) + " " +
         status_title(response.status) + (text.empty() ? "" : ": " + text);
}

}  // namespace

int call(const ClientOptions& o, const std::string& method, const std::string& target,
         HttpResponse& response, std::ostream& err, const std::string& body,
         const std::string& content_type) {
  RequestOptions request{o.timeout_ms, o.token, o.ca_file};
  if (request.token.empty()) request.token = find_token(o.state_dir);
  auto result = http_request(o.server, method, target, body, content_type, request);
  if (!result.ok()) return report(result.error(), err);
  response = std::move(result.value());
  if (response.status >= 400) {
    err << "error: " << problem_detail(response) << '\n';
    return kExitServerError;
  }
  return kExitOk;
}

int call_json(const ClientOptions& o, const std::string& method, const std::string& target,
              json& out_body, std::ostream& err, const std::string& body,
              const std::string& content_type) {
  HttpResponse response;
  if (int rc = call(o, method, target, response, err, body, content_type); rc != kExitOk) {
    return rc;
  }
  out_body = json::parse(response.body, nullptr, false);
  if (out_body.is_discarded()) {
    err << "error: the server at " << o.server << " sent a response that is not JSON\n";
    return kExitServerError;
  }
  return kExitOk;
}

namespace {

// The file's text, never more than the server's request body limit (so /dev/zero cannot hang
// the client); false after printing why on err.
bool read_for_post(const std::string& file, std::string& text, std::ostream& err) {
  std::string error;
  if (read_spec_file(file, ServerOptions{}.max_body, text, error)) return true;
  err << "error: " << error << '\n';
  return false;
}

int post_text(const ClientOptions& o, const std::string& target, const std::string& file,
              const std::string& text, bool is_json, json& out_body, std::ostream& err,
              const std::string& extra_query) {
  return call_json(o, "POST", target + "?source=" + percent_encode(file) + extra_query, out_body,
                   err, text, is_json ? "application/json" : "application/yaml");
}

bool is_json_file(const std::string& file) {
  return file.size() >= 5 && file.substr(file.size() - 5) == ".json";
}

}  // namespace

int post_file(const ClientOptions& o, const std::string& target, const std::string& file,
              json& out_body, std::ostream& err, const std::string& extra_query) {
  std::string text;
  if (!read_for_post(file, text, err)) return kExitUsage;
  return post_text(o, target, file, text, is_json_file(file), out_body, err, extra_query);
}

int submit_spec(const ClientOptions& o, const std::string& file, std::uint64_t workdir_limit,
                const SubmitExtras& extras, json& out_body, std::ostream& err) {
  std::string text;
  if (!read_for_post(file, text, err)) return kExitUsage;
  bool is_json = is_json_file(file);
  if (!extras.overrides.empty()) {
    std::string changed, error;
    if (!apply_spec_overrides(text, file, extras.overrides, changed, error)) {
      err << "error: " << error << '\n';
      return kExitUsage;
    }
    text = std::move(changed);
    is_json = false;  // written back as YAML
  }
  std::string query;
  if (int rc = prepare_workdir(o, file, text, workdir_limit, query, err); rc != kExitOk) return rc;
  if (extras.queue_anyway) query += "&queue_anyway=true";
  // The server's errors name the file; their line numbers are those of the changed spec.
  const std::string source = extras.overrides.empty() ? file : file + " (changed by -e/--set)";
  return post_text(o, "/api/v1/jobs", source, text, is_json, out_body, err, query);
}

std::string with_query(std::string path,
                       std::initializer_list<std::pair<const char*, std::string>> params) {
  char sep = '?';
  for (const auto& [key, value] : params) {
    if (value.empty()) continue;
    path += sep;
    path += key;
    path += '=';
    path += percent_encode(value);
    sep = '&';
  }
  return path;
}

bool as_json(const ClientOptions& o) {
  return o.output == "json";
}

void print_json(const json& body, std::ostream& out) {
  out << body.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

std::string cluster_path(const std::string& name) {
  return "/api/v1/clusters/" + percent_encode(name);
}

}  // namespace orch
