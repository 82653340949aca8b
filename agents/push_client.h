#pragma once
// The agent's HTTPS client for pushing records home (issue 44): one POST at a time over a kept
// connection, TLS through OpenSSL (linked statically into the agent alone), the server's
// certificate checked against ORCH_PUSH_CA (PEM; a leaf counts as a trust anchor) or the system
// store, and its name (an IP or DNS subjectAltName) against the URL's host. Every step (name
// lookup aside, see agents/README.md), connect, handshake, write and read, is bounded by the
// request's deadline and can be cut short by an abort flag. Blocking: run it on its own thread.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "agents/push_queue.h"

namespace orch::agent {

// An https:// URL's parts: https://HOST[:PORT][/PATH]; HOST may be [IPv6].
struct PushUrl {
  std::string host;  // without brackets
  int port = 443;
  std::string path;  // "" or "/prefix" (no trailing slash)
  bool host_is_ip = false;
};

// false with *error (where and why) when url is not such a URL (http://, user@, a query, ...).
bool parse_push_url(const std::string& url, PushUrl* out, std::string* error);

class PushClient {
 public:
  PushClient();
  ~PushClient();
  PushClient(const PushClient&) = delete;
  PushClient& operator=(const PushClient&) = delete;

  // Sets up TLS: ca_pem's certificates ("": the system store). false with *error when ca_pem
  // holds no certificate or OpenSSL cannot start.
  bool init(const PushUrl& url, const std::string& ca_pem, std::string* error);

  // POSTs body (JSON) to target with "Authorization: Bearer <credential>" and returns the
  // answer; status 0 (with error) when none came by deadline_ms (steady) or *abort was set.
  // A kept connection that fails before any answer is retried once on a new one.
  PushAnswer post(const std::string& target, const std::string& credential, const std::string& body,
                  std::int64_t deadline_ms, const std::atomic<bool>* abort);

 private:
  struct Tls;
  std::unique_ptr<Tls> tls_;
};

}  // namespace orch::agent
