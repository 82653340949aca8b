#include "scheduler/common/http_url.h"

#include <cctype>

namespace orch {
namespace {

bool host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

bool v6_char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
}

// A byte no URL may carry as it is: space, controls, and non-ASCII (percent-encode those).
bool bad_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u <= 0x20 || u >= 0x7f;
}

}  // namespace

Result<ServerUrl> parse_server_url(const std::string& base_url) {
  const auto bad = [&](const std::string& why) {
    std::string shown;
    for (char c : base_url.substr(0, 200)) shown += bad_byte(c) ? '?' : c;
    return make_error(ErrorKind::invalid, "invalid server URL '" + shown + "': " + why +
                                              " (expected http://HOST:PORT or https://HOST:PORT)");
  };
  for (char c : base_url) {
    if (bad_byte(c)) return bad("it holds a space, a control byte or a byte that is not ASCII");
  }
  ServerUrl url;
  std::string rest;
  if (base_url.rfind("https://", 0) == 0) {
    url.tls = true;
    rest = base_url.substr(8);
  } else if (base_url.rfind("http://", 0) == 0) {
    rest = base_url.substr(7);
  } else {
    return bad("it must start with http:// or https://");
  }
  const auto slash = rest.find_first_of("/?#");
  if (slash != std::string::npos) {
    url.prefix = rest.substr(slash);
    rest.resize(slash);
    if (url.prefix.front() != '/') url.prefix = "/" + url.prefix;
    while (!url.prefix.empty() && url.prefix.back() == '/') url.prefix.pop_back();
  }
  if (rest.find('@') != std::string::npos) return bad("credentials (user@) do not belong in it");
  std::string port = url.tls ? "443" : "80";
  if (!rest.empty() && rest.front() == '[') {  // [::1]:8080
    const auto close = rest.find(']');
    if (close == std::string::npos) return bad("unclosed '['");
    url.host = rest.substr(1, close - 1);
    for (char c : url.host) {
      if (!v6_char(c)) return bad("'" + url.host + "' is not an IPv6 address");
    }
    const std::string tail = rest.substr(close + 1);
    if (!tail.empty()) {
      if (tail.front() != ':') return bad("unexpected text after ']'");
      port = tail.substr(1);
    }
  } else {
    const auto colon = rest.rfind(':');
    url.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
    for (char c : url.host) {
      if (!host_char(c)) return bad("'" + url.host + "' is not a host name or address");
    }
  }
  if (url.host.empty()) return bad("no host");
  if (port.empty() || port.size() > 5) return bad("bad port");
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return bad("bad port '" + port + "'");
  }
  if (std::stoi(port) < 1 || std::stoi(port) > 65535) return bad("port out of range");
  url.port = port;
  return url;
}

}  // namespace orch
