#include "web/http_types.h"

#include <cctype>

namespace orch {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
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

std::string percent_decode(const std::string& text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

std::string percent_encode(const std::string& text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
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
    case 422:
      return "Unprocessable Entity";
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

}  // namespace orch
