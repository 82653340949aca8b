// See push_client.h. Non-blocking sockets and OpenSSL's WANT_READ/WANT_WRITE, each wait a poll()
// of at most kSliceMs so that the deadline and the abort flag are looked at often.
#include "agents/push_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "agents/agent_clock.h"
#include "agents/cli_values.h"

namespace orch::agent {
namespace {

constexpr int kSliceMs = 100;
constexpr std::size_t kMaxAnswerBytes = 1 << 20;

// CA bundles of the common distributions, for the system store (a static OpenSSL looks only in
// Debian's own directory, /usr/lib/ssl).
constexpr const char* kBundles[] = {"/etc/ssl/certs/ca-certificates.crt",
                                    "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem",
                                    "/etc/ssl/ca-bundle.pem"};

std::string ssl_error_text() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return std::strerror(errno);
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

bool is_ip(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// Waits until fd is readable (or writable); "" when it is, else why not.
std::string wait_fd(int fd, bool for_write, std::int64_t deadline_ms,
                    const std::atomic<bool>* abort) {
  for (;;) {
    if (abort != nullptr && abort->load()) return "cut short: the agent is exiting";
    const std::int64_t left = deadline_ms - steady_ms();
    if (left <= 0) return "no answer in time";
    pollfd p{fd, static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left, kSliceMs)));
    if (n > 0) return "";
    if (n < 0 && errno != EINTR) return std::string("poll: ") + std::strerror(errno);
  }
}

int find_header_end(const std::string& s) {
  const size_t at = s.find("\r\n\r\n");
  return at == std::string::npos ? -1 : static_cast<int>(at + 4);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The value of header `name` (lower case) in the head, or "".
std::string header_value(const std::string& head, const std::string& name) {
  const std::string text = lower(head);
  const size_t at = text.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  size_t from = at + 3 + name.size();
  const size_t end = text.find("\r\n", from);
  while (from < end && text[from] == ' ') ++from;
  std::string v = text.substr(from, end - from);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
  return v;
}

// Decodes a whole chunked body; false while it is incomplete (or malformed: *bad).
bool dechunk(const std::string& raw, std::string* out, bool* bad) {
  out->clear();
  size_t at = 0;
  for (;;) {
    const size_t eol = raw.find("\r\n", at);
    if (eol == std::string::npos) return false;
    std::int64_t size = 0;
    const std::string hex = raw.substr(at, std::min(raw.find(';', at), eol) - at);
    char* end = nullptr;
    size = std::strtoll(hex.c_str(), &end, 16);
    if (hex.empty() || end == hex.c_str() || size < 0) {
      *bad = true;
      return false;
    }
    at = eol + 2;
    if (size == 0) return raw.find("\r\n", at) != std::string::npos;
    if (raw.size() < at + static_cast<size_t>(size) + 2) return false;
    out->append(raw, at, static_cast<size_t>(size));
    at += static_cast<size_t>(size) + 2;
  }
}

}  // namespace

bool parse_push_url(const std::string& url, PushUrl* out, std::string* error) {
  constexpr std::string_view kScheme = "https://";
  if (url.rfind(kScheme, 0) != 0) {
    *error = "the push URL must start with https:// (got '" + url + "')";
    return false;
  }
  std::string rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  if (authority.find('@') != std::string::npos || path.find_first_of("?#") != std::string::npos) {
    *error = "the push URL takes no user, query or fragment: https://HOST[:PORT][/PATH]";
    return false;
  }
  while (!path.empty() && path.back() == '/') path.pop_back();
  PushUrl u;
  std::string port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) {
      *error = "the push URL's [IPv6] host has no ']'";
      return false;
    }
    u.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        *error = "the push URL has text after its [IPv6] host";
        return false;
      }
      port = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.find(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  std::int64_t n = 443;
  if (u.host.empty() || (!port.empty() && !parse_int64(port, 1, 65535, &n)) ||
      (port.empty() && authority.find(':') != std::string::npos && authority.front() != '[')) {
    *error = "the push URL wants https://HOST[:PORT] with a port in 1..65535 (got '" + url + "')";
    return false;
  }
  u.port = static_cast<int>(n);
  u.path = path;
  u.host_is_ip = is_ip(u.host);
  *out = u;
  return true;
}

struct PushClient::Tls {
  PushUrl url;
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  int fd = -1;

  ~Tls() {
    close_connection();
    if (ctx != nullptr) SSL_CTX_free(ctx);
  }
  void close_connection() {
    if (ssl != nullptr) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
    ssl = nullptr;
    fd = -1;
  }
  std::string where() const { return url.host + ":" + std::to_string(url.port); }

  std::string connect_tcp(std::int64_t deadline_ms, const std::atomic<bool>* abort);
  std::string handshake(std::int64_t deadline_ms, const std::atomic<bool>* abort);
  // Runs one SSL call until it is done; "" or why it failed. *closed: the peer closed cleanly.
  template <typename Call>
  std::string drive(Call call, std::int64_t deadline_ms, const std::atomic<bool>* abort,
                    int* result, bool* closed = nullptr);
  PushAnswer exchange(const std::string& request, std::int64_t deadline_ms,
                      const std::atomic<bool>* abort, bool* got_bytes);
};

std::string PushClient::Tls::connect_tcp(std::int64_t deadline_ms, const std::atomic<bool>* abort) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(url.port);
  if (int e = getaddrinfo(url.host.c_str(), port.c_str(), &hints, &found); e != 0) {
    return "cannot look up " + url.host + ": " + gai_strerror(e);
  }
  std::string why = "no address for " + url.host;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int s = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0) continue;
    int rc = ::connect(s, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      why = wait_fd(s, true, deadline_ms, abort);
      int err = 0;
      socklen_t len = sizeof err;
      if (why.empty() && getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) == 0) errno = err;
      rc = why.empty() && err == 0 ? 0 : -1;
    }
    if (rc == 0) {
      fd = s;
      freeaddrinfo(found);
      return "";
    }
    if (why.empty()) why = std::strerror(errno);
    ::close(s);
  }
  freeaddrinfo(found);
  return "cannot connect to " + where() + ": " + why;
}

template <typename Call>
std::string PushClient::Tls::drive(Call call, std::int64_t deadline_ms,
                                   const std::atomic<bool>* abort, int* result, bool* closed) {
  for (;;) {
    ERR_clear_error();
    errno = 0;
    const int rc = call();
    if (rc > 0) {
      *result = rc;
      return "";
    }
    const int e = SSL_get_error(ssl, rc);
    std::string why;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      why = wait_fd(fd, e == SSL_ERROR_WANT_WRITE, deadline_ms, abort);
      if (why.empty()) continue;
      return why;
    }
    if (closed != nullptr &&
        (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0))) {
      *closed = true;
      *result = 0;
      return "";
    }
    if (e == SSL_ERROR_SSL && SSL_get_verify_result(ssl) != X509_V_OK) {
      return std::string("the server's certificate is not trusted: ") +
             X509_verify_cert_error_string(SSL_get_verify_result(ssl));
    }
    return e == SSL_ERROR_SYSCALL && errno != 0 ? std::strerror(errno) : ssl_error_text();
  }
}

std::string PushClient::Tls::handshake(std::int64_t deadline_ms, const std::atomic<bool>* abort) {
  ssl = SSL_new(ctx);
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) return "TLS: " + ssl_error_text();
  if (url.host_is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), url.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, url.host.c_str());
    SSL_set1_host(ssl, url.host.c_str());
  }
  int rc = 0;
  std::string why = drive([this] { return SSL_connect(ssl); }, deadline_ms, abort, &rc);
  return why.empty() ? "" : "TLS handshake with " + where() + " failed: " + why;
}

PushAnswer PushClient::Tls::exchange(const std::string& request, std::int64_t deadline_ms,
                                     const std::atomic<bool>* abort, bool* got_bytes) {
  PushAnswer answer;
  int n = 0;
  const std::string why =
      drive([&] { return SSL_write(ssl, request.data(), static_cast<int>(request.size())); },
            deadline_ms, abort, &n);
  if (!why.empty()) {
    answer.error = "cannot send to " + where() + ": " + why;
    return answer;
  }
  std::string raw;
  char buf[16384];
  for (;;) {
    bool closed = false;
    std::string err =
        drive([&] { return SSL_read(ssl, buf, sizeof buf); }, deadline_ms, abort, &n, &closed);
    if (!err.empty()) {
      answer.error = "no answer from " + where() + ": " + err;
      return answer;
    }
    if (!closed) raw.append(buf, static_cast<size_t>(n));
    *got_bytes = *got_bytes || !raw.empty();
    if (raw.size() > kMaxAnswerBytes) {
      answer.error = "the answer from " + where() + " is over 1 MiB";
      return answer;
    }
    const int head_end = find_header_end(raw);
    if (head_end < 0) {
      if (closed) {
        answer.error = "the connection to " + where() + " closed before an answer";
        return answer;
      }
      continue;
    }
    const std::string head = raw.substr(0, static_cast<size_t>(head_end));
    const std::string rest = raw.substr(static_cast<size_t>(head_end));
    bool bad = false;
    std::string body;
    bool complete = false;
    if (header_value(head, "transfer-encoding").find("chunked") != std::string::npos) {
      complete = dechunk(rest, &body, &bad);
    } else if (const std::string len = header_value(head, "content-length"); !len.empty()) {
      body = rest.substr(0, std::min<size_t>(rest.size(), std::strtoull(len.c_str(), nullptr, 10)));
      complete = rest.size() >= std::strtoull(len.c_str(), nullptr, 10);
    } else {
      body = rest;
      complete = closed;
    }
    if (bad || (closed && !complete)) {
      answer.error = "a broken answer from " + where();
      return answer;
    }
    if (!complete) continue;
    if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12) {
      answer.error = "not an HTTP answer from " + where();
      return answer;
    }
    answer.status = std::atoi(head.c_str() + 9);
    answer.body = body;
    if (closed || header_value(head, "connection") == "close") close_connection();
    return answer;
  }
}

PushClient::PushClient() = default;
PushClient::~PushClient() = default;

bool PushClient::init(const PushUrl& url, const std::string& ca_pem, std::string* error) {
  OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, nullptr);
  auto tls = std::make_unique<Tls>();
  tls->url = url;
  tls->ctx = SSL_CTX_new(TLS_client_method());
  if (tls->ctx == nullptr) {
    *error = "TLS: " + ssl_error_text();
    return false;
  }
  SSL_CTX_set_min_proto_version(tls->ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_PEER, nullptr);
  if (ca_pem.empty()) {
    SSL_CTX_set_default_verify_paths(tls->ctx);
    for (const char* bundle : kBundles) {
      if (access(bundle, R_OK) == 0) SSL_CTX_load_verify_locations(tls->ctx, bundle, nullptr);
    }
    ERR_clear_error();
  } else {
    BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
    X509_STORE* store = SSL_CTX_get_cert_store(tls->ctx);
    int added = 0;
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      if (X509_STORE_add_cert(store, cert) == 1) ++added;
      X509_free(cert);
    }
    BIO_free(bio);
    ERR_clear_error();
    if (added == 0) {
      *error = "ORCH_PUSH_CA holds no PEM certificate (BEGIN CERTIFICATE)";
      return false;
    }
    // A pinned server certificate (a leaf) is a trust anchor of its own.
    X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(tls->ctx), X509_V_FLAG_PARTIAL_CHAIN);
  }
  tls_ = std::move(tls);
  return true;
}

PushAnswer PushClient::post(const std::string& target, const std::string& credential,
                            const std::string& body, std::int64_t deadline_ms,
                            const std::atomic<bool>* abort) {
  Tls& t = *tls_;
  const bool ipv6 = t.url.host.find(':') != std::string::npos;
  const std::string host = (ipv6 ? "[" + t.url.host + "]" : t.url.host) +
                           (t.url.port == 443 ? "" : ":" + std::to_string(t.url.port));
  const std::string request =
      "POST " + t.url.path + target + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " +
      credential +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = t.ssl != nullptr;
    PushAnswer answer;
    if (!reused) {
      answer.error = t.connect_tcp(deadline_ms, abort);
      if (answer.error.empty()) answer.error = t.handshake(deadline_ms, abort);
      if (!answer.error.empty()) {
        t.close_connection();
        return answer;
      }
    }
    bool got_bytes = false;
    answer = t.exchange(request, deadline_ms, abort, &got_bytes);
    if (answer.status != 0) return answer;
    t.close_connection();
    // A kept connection the server closed meanwhile: once more on a new one.
    if (!reused || got_bytes) return answer;
  }
  return {};
}

}  // namespace orch::agent
