#pragma once
// An http:// or https:// URL taken apart and checked: the one reading of a URL a person gives
// (the CLI's --server, a webhook's url), so that a URL the clusters file accepts at start is one
// the sender can use later. Pure.

#include <string>

#include "scheduler/common/result.h"

namespace orch {

struct ServerUrl {
  bool tls = false;  // https
  std::string host;
  std::string port;    // given, else 80 (http) or 443 (https)
  std::string prefix;  // "" or "/something", without a trailing slash
};

// invalid, saying why, when the URL is not http(s)://HOST[:PORT][/PATH]: another scheme, no
// host, a host that is neither a DNS name, an IPv4 address nor a bracketed IPv6 address, a
// port outside 1-65535, or a space, a control byte or userinfo ("user@") anywhere.
Result<ServerUrl> parse_server_url(const std::string& base_url);

}  // namespace orch
