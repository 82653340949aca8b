#include "web/http/http_types.h"

#include <cctype>

namespace orch {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string HttpRequest::header(const std::string& name) const {
  auto it = headers.find(lower(name));
  return it == headers.end() ? std::string() : it->second;
}

std::string HttpResponse::header(const std::string& name) const {
  const std::string wanted = lower(name);
  for (const auto& [key, value] : headers) {
    if (lower(key) == wanted) return value;
  }
  if (wanted == "content-type") return content_type;
  return {};
}

void parse_target(const std::string& target, std::string& path,
                  std::map<std::string, std::string>& query) {
  const auto qpos = target.find('?');
  path = target.substr(0, qpos);
  query.clear();
  if (qpos == std::string::npos) return;
  std::string rest = target.substr(qpos + 1);
  if (auto hash = rest.find('#'); hash != std::string::npos) rest.resize(hash);
  std::size_t start = 0;
  while (start <= rest.size()) {
    auto end = rest.find('&', start);
    if (end == std::string::npos) end = rest.size();
    const std::string pair = rest.substr(start, end - start);
    if (!pair.empty()) {
      const auto eq = pair.find('=');
      const std::string key = percent_decode(pair.substr(0, eq), true);
      const std::string value =
          eq == std::string::npos ? std::string() : percent_decode(pair.substr(eq + 1), true);
      query[key] = value;
    }
    start = end + 1;
  }
}

HttpRequest make_request(std::string method, const std::string& target, std::string body,
                         std::string content_type) {
  HttpRequest request;
  request.method = std::move(method);
  parse_target(target, request.path, request.query);
  request.body = std::move(body);
  if (!content_type.empty()) request.headers["content-type"] = std::move(content_type);
  return request;
}

const char* status_title(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 421:
      return "Misdirected Request";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "[::1]" || is_loopback_address(host);
}

bool is_loopback_address(const std::string& address) {
  return address == "::1" || address.rfind("127.", 0) == 0 || address.rfind("::ffff:127.", 0) == 0;
}

}  // namespace orch
