// Internal to orch_kube_client: what the kube_client_*.cpp files share. With them, the only
// place that includes Boost.Beast, Asio SSL and OpenSSL; not installed, not included elsewhere.
#pragma once

#include "adapters/kubernetes/exec_credential.h"
#include "adapters/kubernetes/kube_client.h"
#include "web/http/tls_verify.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <exception>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <poll.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace orch {
namespace kube_client_internal {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = ssl::stream<beast::tcp_stream>;

inline constexpr std::uint64_t kMaxResponseBody = 256u << 20;  // a big list
inline constexpr std::uint32_t kMaxResponseHead = 64u << 10;
inline constexpr std::size_t kMaxWatchLine = 64u << 20;  // one watch event
inline constexpr std::size_t kMaxErrorBody = 1u << 20;   // a non-2xx watch answer
inline constexpr std::chrono::seconds kTokenFileRefresh{60};
inline constexpr const char* kUserAgent = "orchestrate/0.1 (kubernetes adapter)";

inline long long ms(std::chrono::milliseconds d) {
  return static_cast<long long>(d.count());
}

// ---- kube_client_tls.cpp ---------------------------------------------------------------

// The oldest queued OpenSSL error as text (the queue is cleared), or `fallback`.
std::string openssl_error(const std::string& fallback);
bool is_ip_literal(const std::string& host);
// "DNS:localhost, IP:127.0.0.1", or the subject when the certificate has no subjectAltName.
std::string certificate_names(X509* cert);
std::string issuer_of(X509* cert);

// What the verify callback saw during one handshake.
struct VerifyRecord {
  int error = X509_V_OK;
  std::string leaf_names;
  std::string leaf_issuer;
};

// One TLS connection with its own io_context: every operation is run to completion (or to the
// tcp_stream's expiry) on the calling thread.
struct Connection {
  asio::io_context ioc;
  TlsStream stream;
  beast::flat_buffer buffer;
  VerifyRecord verify;
  std::atomic<bool> interrupted{false};  // watches: interrupt_watches() was called

  explicit Connection(ssl::context& ctx) : stream(ioc, ctx) {}

  // Starts one asynchronous operation via `start(handler)` and runs it to completion; the
  // tcp_stream closes the socket when `deadline` passes (beast::error::timeout).
  template <typename Start>
  beast::error_code run(Clock::time_point deadline, Start&& start) {
    beast::error_code result = asio::error::operation_aborted;
    beast::get_lowest_layer(stream).expires_at(deadline);
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  void close() {
    beast::error_code ignored;
    beast::get_lowest_layer(stream).socket().close(ignored);
  }

  // A kept-alive connection is reusable when nothing arrived since the last answer: data or
  // EOF waiting means the server closed it (or broke the protocol).
  bool idle_and_open() {
    auto& socket = beast::get_lowest_layer(stream).socket();
    if (!socket.is_open() || buffer.size() != 0 || SSL_pending(stream.native_handle()) > 0) {
      return false;
    }
    pollfd p{};
    p.fd = socket.native_handle();
    p.events = POLLIN;
    return ::poll(&p, 1, 0) == 0;
  }
};

bool is_closed_by_peer(const beast::error_code& ec);
std::string describe_ec(const beast::error_code& ec);
// A TLS alert from the server (after the handshake, with TLS 1.3 a refused client certificate
// shows up as one on the first read) gets a hint.
std::string tls_alert_hint(const beast::error_code& ec, bool have_client_cert);
// A DNS lookup that cannot block the caller past `deadline`: getaddrinfo runs on a detached
// thread that finishes on its own if we stop waiting.
Result<std::vector<tcp::endpoint>> resolve(const std::string& host, const std::string& port,
                                           Clock::time_point deadline);

// ---- kube_client_request.cpp -----------------------------------------------------------

Result<void> check_path(const std::string& path_and_query);

}  // namespace kube_client_internal

// Defined across kube_client_tls.cpp (TLS setup, connecting, verification),
// kube_client_request.cpp (requests) and kube_client_watch.cpp (watches).
struct KubeClient::Impl {
  using Clock = kube_client_internal::Clock;
  using Connection = kube_client_internal::Connection;
  using VerifyRecord = kube_client_internal::VerifyRecord;
  using StringRequest =
      kube_client_internal::http::request<kube_client_internal::http::string_body>;

  KubeTarget target;
  std::string site;
  std::string verify_name;  // the name the server's certificate must carry
  std::optional<Error> config_error;
  std::unique_ptr<kube_client_internal::ssl::context> ctx;

  std::timed_mutex request_mutex;  // guards conn; timed, so a queued caller keeps its deadline
  std::unique_ptr<Connection> conn;
  std::atomic<std::size_t> opened{0};

  std::mutex token_mutex;
  std::string token;
  Clock::time_point token_read;
  // The user's exec credential plugin, when the kubeconfig names one.
  std::unique_ptr<ExecCredentialSource> exec_source;
  std::uint64_t conn_generation = 0;  // the plugin credential `conn` was opened with (guarded
                                      // by request_mutex)

  std::mutex watches_mutex;
  std::set<Connection*> watches;

  Impl(KubeTarget t, std::string s);

  std::string prefix() const { return "site " + site + ": "; }
  Error invalid(const std::string& what) const {
    return make_error(ErrorKind::invalid, prefix() + what);
  }
  Error unreachable(const std::string& what) const {
    return make_error(ErrorKind::unreachable, prefix() + what);
  }

  // kube_client_tls.cpp
  void build_context();
  // Only the kubeconfig's CA: the store starts empty (set_default_verify_paths is not called).
  bool load_ca();
  void load_client_certificate();
  // Connects and does the TLS handshake; `c` is fresh. `timeout` is for messages. A plugin
  // credential with a client certificate is presented on this connection.
  Result<void> open(Connection& c, Clock::time_point deadline, std::chrono::milliseconds timeout,
                    const ExecCredential* plugin = nullptr);
  std::string verify_failure(const VerifyRecord& v) const;

  // kube_client_request.cpp
  std::string current_token();
  // Who we are for one call: the bearer token (the kubeconfig's, or the plugin's) and the
  // plugin's credential when there is a plugin (which may have failed: then the error).
  struct Auth {
    std::string bearer;
    std::optional<ExecCredential> plugin;
  };
  Result<Auth> auth();
  // One request/response on an open connection.
  struct Exchange {
    std::optional<KubeResponse> response;
    std::optional<Error> error;
    bool retryable = false;  // the connection was found closed before any answer
    bool nothing_written = false;
  };
  Exchange exchange(Connection& c, StringRequest& req, Clock::time_point deadline,
                    std::chrono::milliseconds timeout, const std::string& what);
  void set_common_headers(StringRequest& req, const std::string& bearer);
  Result<KubeResponse> request_once(const std::string& method, const std::string& path_and_query,
                                    const std::string& body, const std::string& content_type,
                                    std::chrono::milliseconds timeout, const Auth& who);
  // request_once, and again with a fresh plugin credential when the server answered 401.
  Result<KubeResponse> request(const std::string& method, const std::string& path_and_query,
                               const std::string& body, const std::string& content_type,
                               std::chrono::milliseconds timeout);

  // kube_client_exec.cpp
  Result<KubeExecResult> exec(const std::string& path_and_query, const ExecInput& input,
                              const ExecOutput& output, std::chrono::milliseconds timeout);

  // kube_client_watch.cpp
  // Registers a watch connection for interrupt_watches() for its lifetime.
  class WatchRegistration;
  void interrupt_watches();
  Result<KubeWatchResult> watch(const std::string& path_and_query,
                                const std::function<bool(const std::string&)>& on_event,
                                std::chrono::milliseconds timeout);
};

}  // namespace orch
