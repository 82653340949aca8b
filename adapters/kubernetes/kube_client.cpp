// The only file of orch_kube_client that includes Boost.Beast, Asio SSL and OpenSSL.
#include "adapters/kubernetes/kube_client.h"

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
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = ssl::stream<beast::tcp_stream>;

constexpr std::uint64_t kMaxResponseBody = 256u << 20;  // a big list
constexpr std::uint32_t kMaxResponseHead = 64u << 10;
constexpr std::size_t kMaxWatchLine = 64u << 20;  // one watch event
constexpr std::size_t kMaxErrorBody = 1u << 20;   // a non-2xx watch answer
constexpr std::chrono::seconds kTokenFileRefresh{60};
constexpr const char* kUserAgent = "orchestrate/0.1 (kubernetes adapter)";

long long ms(std::chrono::milliseconds d) {
  return static_cast<long long>(d.count());
}

// The oldest queued OpenSSL error as text (the queue is cleared), or `fallback`.
std::string openssl_error(const std::string& fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  std::string text(256, '\0');
  ERR_error_string_n(code, text.data(), text.size());
  text.resize(text.find('\0'));
  return text;
}

bool is_ip_literal(const std::string& host) {
  beast::error_code ec;
  (void)asio::ip::make_address(host, ec);
  return !ec;
}

// "DNS:localhost, IP:127.0.0.1", or the subject when the certificate has no subjectAltName.
std::string certificate_names(X509* cert) {
  std::string out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
      std::string item;
      if (name->type == GEN_DNS) {
        const unsigned char* data = ASN1_STRING_get0_data(name->d.dNSName);
        item = "DNS:" + std::string(reinterpret_cast<const char*>(data),
                                    static_cast<std::size_t>(ASN1_STRING_length(name->d.dNSName)));
      } else if (name->type == GEN_IPADD) {
        const int length = ASN1_STRING_length(name->d.iPAddress);
        const unsigned char* data = ASN1_STRING_get0_data(name->d.iPAddress);
        char text[INET6_ADDRSTRLEN] = {};
        if ((length == 4 && inet_ntop(AF_INET, data, text, sizeof text) != nullptr) ||
            (length == 16 && inet_ntop(AF_INET6, data, text, sizeof text) != nullptr)) {
          item = std::string("IP:") + text;
        }
      }
      if (item.empty()) continue;
      if (!out.empty()) out += ", ";
      out += item;
    }
    GENERAL_NAMES_free(names);
  }
  if (out.empty()) {
    char subject[512] = {};
    X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof subject);
    out = std::string("no subjectAltName; subject ") + subject;
  }
  return out;
}

std::string issuer_of(X509* cert) {
  char issuer[512] = {};
  X509_NAME_oneline(X509_get_issuer_name(cert), issuer, sizeof issuer);
  return issuer;
}

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

// OpenSSL 3 reports a TCP close without TLS close_notify as an SSL error of its own, which
// Asio 1.74 passes on as is (later versions map it to stream_truncated).
bool is_unexpected_eof(const beast::error_code& ec) {
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
  return ec.category() == asio::error::get_ssl_category() &&
         ERR_GET_REASON(static_cast<unsigned long>(ec.value())) ==
             SSL_R_UNEXPECTED_EOF_WHILE_READING;
#else
  (void)ec;
  return false;
#endif
}

bool is_closed_by_peer(const beast::error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::connection_aborted || ec == asio::error::broken_pipe ||
         ec == ssl::error::stream_truncated || ec == http::error::end_of_stream ||
         is_unexpected_eof(ec);
}

std::string describe_ec(const beast::error_code& ec) {
  if (ec == asio::error::connection_refused) return "connection refused";
  if (ec == asio::error::connection_reset) return "the server reset the connection";
  if (ec == ssl::error::stream_truncated || ec == http::error::end_of_stream ||
      ec == asio::error::eof || is_unexpected_eof(ec)) {
    return "the server closed the connection";
  }
  return ec.message();
}

// A TLS alert from the server (after the handshake, with TLS 1.3 a refused client certificate
// shows up as one on the first read) gets a hint.
std::string tls_alert_hint(const beast::error_code& ec, bool have_client_cert) {
  if (ec.category() != asio::error::get_ssl_category()) return "";
  const std::string text = ec.message();
  if (text.find("certificate required") != std::string::npos) {
    return " (the server requires a client certificate" +
           std::string(have_client_cert ? ", and did not accept ours)" : "; the user has none)");
  }
  if (text.find("bad certificate") != std::string::npos ||
      text.find("unknown ca") != std::string::npos ||
      text.find("certificate unknown") != std::string::npos ||
      text.find("unsupported certificate") != std::string::npos) {
    return " (the server refused our client certificate)";
  }
  if (text.find("wrong version number") != std::string::npos ||
      text.find("packet length too long") != std::string::npos) {
    return " (does the server speak TLS on this port? it may be plain HTTP)";
  }
  return "";
}

// A DNS lookup that cannot block the caller past `deadline`: getaddrinfo runs on a detached
// thread that finishes on its own if we stop waiting.
Result<std::vector<tcp::endpoint>> resolve(const std::string& host, const std::string& port,
                                           Clock::time_point deadline) {
  if (is_ip_literal(host)) {
    return std::vector<tcp::endpoint>{
        tcp::endpoint(asio::ip::make_address(host), static_cast<unsigned short>(std::stoi(port)))};
  }
  struct Pending {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    std::vector<tcp::endpoint> endpoints;
    std::string error;
  };
  auto pending = std::make_shared<Pending>();
  std::thread([pending, host, port] {
    std::vector<tcp::endpoint> endpoints;
    std::string error;
    try {
      asio::io_context ioc;
      tcp::resolver resolver(ioc);
      beast::error_code ec;
      const auto results = resolver.resolve(host, port, ec);
      if (ec) {
        error = ec.message();
      } else {
        for (const auto& entry : results) endpoints.push_back(entry.endpoint());
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    const std::lock_guard lock(pending->mutex);
    pending->endpoints = std::move(endpoints);
    pending->error = std::move(error);
    pending->done = true;
    pending->done_cv.notify_all();
  }).detach();
  std::unique_lock lock(pending->mutex);
  if (!pending->done_cv.wait_until(lock, deadline, [&] { return pending->done; })) {
    return make_error(ErrorKind::unreachable, "no answer from DNS in time");
  }
  if (!pending->error.empty()) return make_error(ErrorKind::unreachable, pending->error);
  if (pending->endpoints.empty()) return make_error(ErrorKind::unreachable, "no addresses");
  return pending->endpoints;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_idempotent(http::verb verb) {
  return verb == http::verb::get || verb == http::verb::head || verb == http::verb::put ||
         verb == http::verb::delete_ || verb == http::verb::options;
}

Result<void> check_path(const std::string& path_and_query) {
  if (path_and_query.empty() || path_and_query.front() != '/') {
    return make_error(ErrorKind::invalid,
                      "request path '" + path_and_query + "' must start with '/'");
  }
  for (char c : path_and_query) {
    if (c == ' ' || c == '\r' || c == '\n' || c == '\0') {
      return make_error(ErrorKind::invalid, "request path '" + path_and_query +
                                                "' contains a space or control character");
    }
  }
  return Ok{};
}

// Splits a byte stream into lines ('\n', with an optional '\r'), skipping empty ones.
class LineSplitter {
 public:
  // Feeds bytes; calls `emit` per complete line; false when `emit` said stop.
  template <typename Emit>
  bool feed(const char* data, std::size_t size, Emit&& emit) {
    pending_.append(data, size);
    std::size_t start = 0;
    bool go_on = true;
    for (std::size_t nl = pending_.find('\n', start); nl != std::string::npos && go_on;
         nl = pending_.find('\n', start)) {
      std::size_t end = nl;
      if (end > start && pending_[end - 1] == '\r') --end;
      if (end > start) go_on = emit(pending_.substr(start, end - start));
      start = nl + 1;
    }
    pending_.erase(0, start);
    return go_on;
  }
  std::string take_rest() { return std::exchange(pending_, std::string()); }
  std::size_t pending_size() const { return pending_.size(); }

 private:
  std::string pending_;
};

}  // namespace

std::string KubeResponse::header(std::string_view name) const {
  const std::string wanted = lower(name);
  for (const auto& [key, value] : headers) {
    if (lower(key) == wanted) return value;
  }
  return "";
}

const char* to_string(WatchEnd end) {
  switch (end) {
    case WatchEnd::server_closed:
      return "server_closed";
    case WatchEnd::callback_stopped:
      return "callback_stopped";
    case WatchEnd::time_limit:
      return "time_limit";
    case WatchEnd::connection_lost:
      return "connection_lost";
    case WatchEnd::interrupted:
      return "interrupted";
  }
  return "unknown";
}

struct KubeClient::Impl {
  KubeTarget target;
  std::string site;
  std::string verify_name;  // the name the server's certificate must carry
  std::optional<Error> config_error;
  std::unique_ptr<ssl::context> ctx;

  std::timed_mutex request_mutex;  // guards conn; timed, so a queued caller keeps its deadline
  std::unique_ptr<Connection> conn;
  std::atomic<std::size_t> opened{0};

  std::mutex token_mutex;
  std::string token;
  Clock::time_point token_read;

  std::mutex watches_mutex;
  std::set<Connection*> watches;

  Impl(KubeTarget t, std::string s) : target(std::move(t)), site(std::move(s)) {
    verify_name = target.tls_server_name.empty() ? target.host : target.tls_server_name;
    token = target.token;
    token_read = Clock::now();
    try {
      build_context();
    } catch (const std::exception& e) {
      config_error = invalid(std::string("cannot set up TLS: ") + e.what());
    }
  }

  std::string prefix() const { return "site " + site + ": "; }
  Error invalid(const std::string& what) const {
    return make_error(ErrorKind::invalid, prefix() + what);
  }
  Error unreachable(const std::string& what) const {
    return make_error(ErrorKind::unreachable, prefix() + what);
  }

  void build_context() {
    ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    SSL_CTX* native = ctx->native_handle();
    SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
    ERR_clear_error();
    if (target.insecure_skip_tls_verify) {
      ctx->set_verify_mode(ssl::verify_none);
    } else {
      ctx->set_verify_mode(ssl::verify_peer);
      if (target.ca_pem.empty()) {
        beast::error_code ec;
        ctx->set_default_verify_paths(ec);
        if (ec) {
          config_error = invalid("cannot load the system's trusted CAs: " + ec.message());
          return;
        }
      } else if (!load_ca()) {
        return;
      }
    }
    if (!target.client_cert_pem.empty()) load_client_certificate();
  }

  // Only the kubeconfig's CA: the store starts empty (set_default_verify_paths is not called).
  bool load_ca() {
    X509_STORE* store = SSL_CTX_get_cert_store(ctx->native_handle());
    BIO* bio = BIO_new_mem_buf(target.ca_pem.data(), static_cast<int>(target.ca_pem.size()));
    int added = 0;
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      if (X509_STORE_add_cert(store, cert) == 1) ++added;
      X509_free(cert);
    }
    BIO_free(bio);
    const std::string why = openssl_error("no certificate found");
    if (added == 0) {
      config_error =
          invalid("cannot load the certificate authority from " + target.ca_source + ": " + why);
      return false;
    }
    return true;
  }

  void load_client_certificate() {
    SSL_CTX* native = ctx->native_handle();
    const auto fail = [&](const std::string& what) {
      config_error =
          invalid("cannot use the client certificate " + target.client_cert_source + ": " + what);
    };
    BIO* bio = BIO_new_mem_buf(target.client_cert_pem.data(),
                               static_cast<int>(target.client_cert_pem.size()));
    X509* leaf = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    if (leaf == nullptr) {
      BIO_free(bio);
      fail("the certificate cannot be read: " + openssl_error("no certificate found"));
      return;
    }
    const bool used = SSL_CTX_use_certificate(native, leaf) == 1;
    X509_free(leaf);
    if (!used) {
      BIO_free(bio);
      fail(openssl_error("the certificate was refused"));
      return;
    }
    // Intermediate certificates after the first one are sent along.
    while (X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      if (SSL_CTX_add0_chain_cert(native, extra) != 1) X509_free(extra);
    }
    ERR_clear_error();
    BIO_free(bio);

    bio = BIO_new_mem_buf(target.client_key_pem.data(),
                          static_cast<int>(target.client_key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (key == nullptr) {
      fail("the private key cannot be read (an encrypted key is not supported): " +
           openssl_error("no key found"));
      return;
    }
    const bool key_used = SSL_CTX_use_PrivateKey(native, key) == 1;
    EVP_PKEY_free(key);
    if (!key_used || SSL_CTX_check_private_key(native) != 1) {
      fail("the private key does not match the certificate: " + openssl_error("mismatch"));
    }
  }

  std::string current_token() {
    const std::lock_guard lock(token_mutex);
    if (!target.token_file.empty() && Clock::now() - token_read >= kTokenFileRefresh) {
      token_read = Clock::now();
      std::ifstream in(target.token_file, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      std::string fresh = text.str();
      while (!fresh.empty() && std::isspace(static_cast<unsigned char>(fresh.back())))
        fresh.pop_back();
      while (!fresh.empty() && std::isspace(static_cast<unsigned char>(fresh.front()))) {
        fresh.erase(0, 1);
      }
      if (in && !fresh.empty()) token = fresh;  // a failed read keeps the last good token
    }
    return token;
  }

  // Connects and does the TLS handshake; `c` is fresh. `timeout` is for messages.
  Result<void> open(Connection& c, Clock::time_point deadline, std::chrono::milliseconds timeout) {
    auto endpoints = resolve(target.host, target.port, deadline);
    if (!endpoints.ok()) {
      return unreachable("cannot resolve " + target.host + " (server " + target.server +
                         "): " + endpoints.error().message);
    }
    beast::error_code ec = c.run(deadline, [&](auto handler) {
      beast::get_lowest_layer(c.stream).async_connect(*endpoints, std::move(handler));
    });
    if (c.interrupted) return Ok{};  // the caller looks at the flag
    if (ec == beast::error::timeout) {
      return unreachable("cannot connect to " + target.server + ": no connection within " +
                         std::to_string(ms(timeout)) + " ms");
    }
    if (ec) return unreachable("cannot connect to " + target.server + ": " + describe_ec(ec));

    SSL* ssl_handle = c.stream.native_handle();
    if (!is_ip_literal(verify_name)) SSL_set_tlsext_host_name(ssl_handle, verify_name.c_str());
    if (!target.insecure_skip_tls_verify) {
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      const int named = is_ip_literal(verify_name)
                            ? X509_VERIFY_PARAM_set1_ip_asc(param, verify_name.c_str())
                            : X509_VERIFY_PARAM_set1_host(param, verify_name.c_str(), 0);
      if (named != 1) return invalid("cannot verify the server name '" + verify_name + "'");
      VerifyRecord* record = &c.verify;
      c.stream.set_verify_callback([record](bool preverified, ssl::verify_context& vc) {
        X509_STORE_CTX* store = vc.native_handle();
        if (record->leaf_names.empty()) {
          if (X509* leaf = X509_STORE_CTX_get0_cert(store)) {
            record->leaf_names = certificate_names(leaf);
            record->leaf_issuer = issuer_of(leaf);
          }
        }
        if (!preverified && record->error == X509_V_OK) {
          record->error = X509_STORE_CTX_get_error(store);
        }
        return preverified;
      });
    }
    ec = c.run(deadline, [&](auto handler) {
      c.stream.async_handshake(ssl::stream_base::client, std::move(handler));
    });
    ERR_clear_error();
    if (!ec) return Ok{};
    if (c.interrupted) return Ok{};
    const std::string head = "TLS handshake with " + target.server + " failed: ";
    if (c.verify.error != X509_V_OK) return unreachable(head + verify_failure(c.verify));
    if (ec == beast::error::timeout) {
      return unreachable(head + "no TLS answer within " + std::to_string(ms(timeout)) +
                         " ms (is it a TLS port?)");
    }
    return unreachable(head + describe_ec(ec) +
                       tls_alert_hint(ec, !target.client_cert_pem.empty()));
  }

  std::string verify_failure(const VerifyRecord& v) const {
    std::string text =
        std::string("certificate verify failed: ") + X509_verify_cert_error_string(v.error);
    switch (v.error) {
      case X509_V_ERR_HOSTNAME_MISMATCH:
      case X509_V_ERR_IP_ADDRESS_MISMATCH:
        text += " (the server's certificate is not valid for '" + verify_name + "'; it names " +
                v.leaf_names + ")";
        if (target.tls_server_name.empty()) {
          text +=
              "; if the server is reached under another name, set tls-server-name for "
              "cluster \"" +
              target.cluster + "\" in kubeconfig " + target.kubeconfig;
        }
        break;
      case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
      case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
      case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
      case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      case X509_V_ERR_CERT_SIGNATURE_FAILURE:
        text += " (the server's certificate, issued by " + v.leaf_issuer + ", is not signed by ";
        text += target.ca_pem.empty() ? "a CA of the system trust store; cluster \"" +
                                            target.cluster + "\" in kubeconfig " +
                                            target.kubeconfig + " gives no certificate-authority)"
                                      : "the CA given by " + target.ca_source + ")";
        break;
      default:
        break;
    }
    return text;
  }

  // One request/response on an open connection.
  struct Exchange {
    std::optional<KubeResponse> response;
    std::optional<Error> error;
    bool retryable = false;  // the connection was found closed before any answer
    bool nothing_written = false;
  };

  Exchange exchange(Connection& c, http::request<http::string_body>& req,
                    Clock::time_point deadline, std::chrono::milliseconds timeout,
                    const std::string& what) {
    Exchange out;
    const beast::error_code write_ec = c.run(
        deadline, [&](auto handler) { http::async_write(c.stream, req, std::move(handler)); });
    if (write_ec == beast::error::timeout) {
      out.error = unreachable(target.server + " did not take " + what + " within " +
                              std::to_string(ms(timeout)) + " ms");
      return out;
    }
    out.nothing_written = write_ec && is_closed_by_peer(write_ec);
    // Even when the write failed, read: the server may have answered (and closed) already.
    http::response_parser<http::string_body> parser;
    parser.header_limit(kMaxResponseHead);
    parser.body_limit(kMaxResponseBody);
    if (req.method() == http::verb::head) parser.skip(true);
    beast::error_code ec = c.run(deadline, [&](auto handler) {
      http::async_read(c.stream, c.buffer, parser, std::move(handler));
    });
    if (ec == http::error::end_of_stream && parser.is_done()) ec = {};
    if (ec) {
      if (ec == beast::error::timeout) {
        out.error = unreachable(target.server + " did not answer " + what + " within " +
                                std::to_string(ms(timeout)) + " ms");
        return out;
      }
      const beast::error_code cause = !parser.got_some() && write_ec ? write_ec : ec;
      out.retryable = !parser.got_some() && is_closed_by_peer(cause);
      out.error =
          unreachable("connection to " + target.server + " failed during " + what + ": " +
                      describe_ec(cause) + tls_alert_hint(cause, !target.client_cert_pem.empty()));
      return out;
    }
    const auto& message = parser.get();
    KubeResponse response;
    response.status = static_cast<int>(message.result_int());
    response.content_type = std::string(message[http::field::content_type]);
    for (const auto& field : message) {
      response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    response.body = message.body();
    if (!message.keep_alive()) c.close();
    out.response = std::move(response);
    return out;
  }

  void set_common_headers(http::request<http::string_body>& req) {
    const bool ipv6 = target.host.find(':') != std::string::npos;
    req.set(http::field::host, (ipv6 ? "[" + target.host + "]" : target.host) + ":" + target.port);
    req.set(http::field::user_agent, kUserAgent);
    req.set(http::field::accept, "application/json");
    const std::string bearer = current_token();
    if (!bearer.empty()) req.set(http::field::authorization, "Bearer " + bearer);
  }

  Result<KubeResponse> request(const std::string& method, const std::string& path_and_query,
                               const std::string& body, const std::string& content_type,
                               std::chrono::milliseconds timeout) {
    if (config_error) return *config_error;
    auto path_ok = check_path(path_and_query);
    if (!path_ok.ok()) return invalid(path_ok.error().message);
    const http::verb verb = http::string_to_verb(method);
    if (verb == http::verb::unknown) return invalid("unknown HTTP method '" + method + "'");
    const std::string what = method + " " + path_and_query;
    const auto deadline = Clock::now() + timeout;

    http::request<http::string_body> req{verb, target.path_prefix + path_and_query, 11};
    set_common_headers(req);
    if (!body.empty() || verb == http::verb::post || verb == http::verb::put ||
        verb == http::verb::patch) {
      req.set(http::field::content_type, content_type);
      req.body() = body;
    }
    req.keep_alive(true);
    req.prepare_payload();

    std::unique_lock lock(request_mutex, std::defer_lock);
    if (!lock.try_lock_until(deadline)) {
      return unreachable("the connection to " + target.server + " stayed busy with other " +
                         "requests for " + std::to_string(ms(timeout)) + " ms; " + what +
                         " was not sent");
    }
    for (int attempt = 0;; ++attempt) {
      const bool reused = conn != nullptr && conn->idle_and_open();
      if (!reused) {
        conn.reset();
        auto fresh = std::make_unique<Connection>(*ctx);
        ++opened;
        auto opened_ok = open(*fresh, deadline, timeout);
        if (!opened_ok.ok()) return opened_ok.error();
        conn = std::move(fresh);
      }
      Exchange result = exchange(*conn, req, deadline, timeout, what);
      if (result.response) {
        if (!beast::get_lowest_layer(conn->stream).socket().is_open()) conn.reset();
        return std::move(*result.response);
      }
      conn.reset();
      const bool may_retry = reused && result.retryable && attempt == 0 &&
                             (is_idempotent(verb) || result.nothing_written) &&
                             Clock::now() < deadline;
      if (!may_retry) return *result.error;
    }
  }

  // Registers a watch connection for interrupt_watches() for its lifetime.
  class WatchRegistration {
   public:
    WatchRegistration(Impl& impl, Connection& c) : impl_(impl), c_(c) {
      const std::lock_guard lock(impl_.watches_mutex);
      impl_.watches.insert(&c_);
    }
    ~WatchRegistration() {
      const std::lock_guard lock(impl_.watches_mutex);
      impl_.watches.erase(&c_);
    }
    WatchRegistration(const WatchRegistration&) = delete;
    WatchRegistration& operator=(const WatchRegistration&) = delete;

   private:
    Impl& impl_;
    Connection& c_;
  };

  void interrupt_watches() {
    const std::lock_guard lock(watches_mutex);
    for (Connection* c : watches) {
      c->interrupted = true;
      // Runs on the watching thread, inside its next (or current) io_context::run().
      asio::post(c->ioc, [c] {
        beast::error_code ignored;
        beast::get_lowest_layer(c->stream).socket().cancel(ignored);
      });
    }
  }

  Result<KubeWatchResult> watch(const std::string& path_and_query,
                                const std::function<bool(const std::string&)>& on_event,
                                std::chrono::milliseconds timeout) {
    if (config_error) return *config_error;
    auto path_ok = check_path(path_and_query);
    if (!path_ok.ok()) return invalid(path_ok.error().message);
    const std::string what = "GET " + path_and_query + " (watch)";
    const auto start = Clock::now();
    const auto end_deadline = start + timeout;
    const auto answer_timeout = std::min(timeout, kWatchAnswerTimeout);
    const auto answer_deadline = start + answer_timeout;

    Connection c(*ctx);
    const WatchRegistration registration(*this, c);
    KubeWatchResult result;
    const auto interrupted = [&] {
      result.end = WatchEnd::interrupted;
      c.close();
      return result;
    };

    auto opened_ok = open(c, answer_deadline, answer_timeout);
    if (!opened_ok.ok()) return opened_ok.error();
    if (c.interrupted) return interrupted();

    http::request<http::string_body> req{http::verb::get, target.path_prefix + path_and_query, 11};
    set_common_headers(req);
    req.keep_alive(false);
    req.prepare_payload();
    beast::error_code ec = c.run(answer_deadline, [&](auto handler) {
      http::async_write(c.stream, req, std::move(handler));
    });
    if (c.interrupted) return interrupted();
    if (ec == beast::error::timeout) {
      return unreachable(target.server + " did not take " + what + " within " +
                         std::to_string(ms(answer_timeout)) + " ms");
    }
    // A write error is reported by the read below unless an answer is already there.

    http::response_parser<http::buffer_body> parser;
    parser.header_limit(kMaxResponseHead);
    // Not boost::none: Boost 1.74 then refuses every body with a Content-Length.
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    ec = c.run(answer_deadline, [&](auto handler) {
      http::async_read_header(c.stream, c.buffer, parser, std::move(handler));
    });
    if (c.interrupted) return interrupted();
    if (ec == beast::error::timeout) {
      return unreachable(target.server + " did not answer " + what + " within " +
                         std::to_string(ms(answer_timeout)) + " ms");
    }
    if (ec) {
      return unreachable("connection to " + target.server + " failed during " + what + ": " +
                         describe_ec(ec) + tls_alert_hint(ec, !target.client_cert_pem.empty()));
    }
    result.status = static_cast<int>(parser.get().result_int());
    const bool streaming = result.status >= 200 && result.status < 300;
    // A non-2xx answer is a short Status document: it must arrive as promptly as the head.
    const auto body_deadline = streaming ? end_deadline : answer_deadline;
    const bool close_delimited = !parser.chunked() && !parser.content_length();

    LineSplitter lines;
    std::vector<char> chunk(64u << 10);
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      ec = c.run(body_deadline, [&](auto handler) {
        http::async_read_some(c.stream, c.buffer, parser, std::move(handler));
      });
      if (ec == http::error::need_buffer) ec = {};
      const std::size_t n = chunk.size() - parser.get().body().size;
      if (streaming) {
        const bool go_on = lines.feed(chunk.data(), n, [&](const std::string& line) {
          ++result.lines;
          return on_event(line);
        });
        if (!go_on) {
          result.end = WatchEnd::callback_stopped;
          c.close();
          return result;
        }
        if (lines.pending_size() > kMaxWatchLine) {
          c.close();
          return unreachable(target.server + " sent a line longer than " +
                             std::to_string(kMaxWatchLine >> 20) + " MiB during " + what);
        }
      } else if (result.body.size() < kMaxErrorBody) {
        result.body.append(chunk.data(), std::min(n, kMaxErrorBody - result.body.size()));
      }
      if (c.interrupted) return interrupted();
      if (!ec) continue;
      if (ec == beast::error::timeout) {
        if (!streaming) {
          return unreachable(target.server + " did not finish its answer to " + what + " within " +
                             std::to_string(ms(answer_timeout)) + " ms");
        }
        result.end = WatchEnd::time_limit;
        return result;
      }
      if (close_delimited && is_closed_by_peer(ec)) break;  // the end of such a body
      c.close();
      if (!streaming) {
        return unreachable("connection to " + target.server + " failed during " + what + ": " +
                           describe_ec(ec));
      }
      result.end = WatchEnd::connection_lost;
      result.detail =
          "connection to " + target.server + " lost during " + what + ": " + describe_ec(ec);
      return result;
    }
    // The response is complete: a last line without '\n' is still a whole line.
    if (streaming) {
      const std::string rest = lines.take_rest();
      if (!rest.empty() && rest != "\r") {
        ++result.lines;
        if (!on_event(rest)) result.end = WatchEnd::callback_stopped;
      }
    }
    c.close();
    return result;
  }
};

KubeClient::KubeClient(KubeTarget target, std::string site)
    : impl_(std::make_unique<Impl>(std::move(target), std::move(site))) {}

KubeClient::~KubeClient() = default;

Result<void> KubeClient::usable() const {
  if (impl_->config_error) return *impl_->config_error;
  return Ok{};
}

Result<KubeResponse> KubeClient::request(const std::string& method,
                                         const std::string& path_and_query, const std::string& body,
                                         const std::string& content_type,
                                         std::chrono::milliseconds timeout) {
  try {
    return impl_->request(method, path_and_query, body, content_type, timeout);
  } catch (const std::exception& e) {
    const std::lock_guard lock(impl_->request_mutex);
    impl_->conn.reset();
    return impl_->unreachable(method + " " + path_and_query + " on " + impl_->target.server +
                              " failed: " + e.what());
  }
}

Result<KubeWatchResult> KubeClient::watch(
    const std::string& path_and_query, const std::function<bool(const std::string& line)>& on_event,
    std::chrono::milliseconds timeout) {
  // Exceptions from on_event propagate (documented); the client's own become errors.
  bool callback_threw = false;
  const std::function<bool(const std::string&)> guarded = [&](const std::string& line) {
    try {
      return on_event(line);
    } catch (...) {
      callback_threw = true;
      throw;
    }
  };
  try {
    return impl_->watch(path_and_query, guarded, timeout);
  } catch (const std::exception& e) {
    if (callback_threw) throw;
    return impl_->unreachable("watch " + path_and_query + " on " + impl_->target.server +
                              " failed: " + e.what());
  }
}

void KubeClient::interrupt_watches() {
  impl_->interrupt_watches();
}

void KubeClient::disconnect() {
  const std::lock_guard lock(impl_->request_mutex);
  impl_->conn.reset();
}

std::size_t KubeClient::connections_opened() const {
  return impl_->opened.load();
}

const KubeTarget& KubeClient::target() const {
  return impl_->target;
}

const std::string& KubeClient::site() const {
  return impl_->site;
}

}  // namespace orch
