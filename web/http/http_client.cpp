// The only client-side file that includes Boost.Beast and Asio SSL.
#include "web/http/http_client.h"

#include <cctype>
#include <chrono>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include "web/http/tls_verify.h"

namespace orch {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

constexpr std::size_t kMaxResponseBody = 64u << 20;

std::string hint(const std::string& base_url) {
  return "cannot reach orchestrate server at " + base_url;
}
constexpr const char* kWhatToDo = " (is `orchestrate serve` running? set --server or ORCH_URL)";

Error unreachable(const std::string& base_url, const beast::error_code& ec, int timeout_ms) {
  std::string why;
  if (ec == asio::error::connection_refused) {
    why = "connection refused";
  } else if (ec == beast::error::timeout) {
    why = "no answer within " + std::to_string(timeout_ms) + " ms";
  } else {
    why = ec.message();
  }
  return make_error(ErrorKind::unreachable, hint(base_url) + ": " + why + kWhatToDo);
}

// Runs the pending asynchronous operation to completion; tcp_stream's expiry bounds it.
void run(asio::io_context& ioc) {
  ioc.restart();
  ioc.run();
}

bool is_ip_literal(const std::string& host) {
  beast::error_code ec;
  (void)asio::ip::make_address(host, ec);
  return !ec;
}

// The context of an https call: the peer is verified against ca_file, or the system store.
Result<std::unique_ptr<ssl::context>> client_tls_context(const std::string& ca_file) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_verify_mode(ssl::verify_peer);
  beast::error_code ec;
  if (ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec) {
      return make_error(ErrorKind::invalid,
                        "cannot load the system's trusted CAs: " + ec.message() +
                            " (pass --ca FILE with the CA that signed the server's certificate)");
    }
  } else {
    ctx->load_verify_file(ca_file, ec);
    if (ec) {
      ERR_clear_error();
      return make_error(ErrorKind::invalid, "cannot use " + ca_file +
                                                " as the CA (--ca or ORCH_CA): " + ec.message() +
                                                " (expected a readable PEM file of certificates)");
    }
  }
  return ctx;
}

// Why the handshake failed, in words that say what to do.
std::string handshake_failure(const std::string& base_url, const ServerUrl& url, long verify,
                              const beast::error_code& ec, const std::string& ca_file,
                              int timeout_ms) {
  if (verify == X509_V_OK) {
    std::string why = ec == beast::error::timeout
                          ? "no TLS answer within " + std::to_string(timeout_ms) + " ms"
                          : ec.message();
    if (why.find("wrong version number") != std::string::npos ||
        why.find("packet length too long") != std::string::npos) {
      why += " (the server does not speak TLS on this port: for a plain HTTP server use http://)";
    }
    return "TLS handshake with " + base_url + " failed: " + why;
  }
  std::string text =
      "the TLS certificate of " + base_url + " is not trusted: " + verify_failed_text(verify);
  switch (verify_problem(verify)) {
    case VerifyProblem::wrong_name:
      text += " (it is not issued for " + url.host +
              "; reach the server by a name its certificate holds)";
      break;
    case VerifyProblem::out_of_date:
      text += " (the server's certificate must be renewed, or this machine's clock is wrong)";
      break;
    case VerifyProblem::untrusted_issuer:
      text += ca_file.empty()
                  ? " (it is not signed by a CA of the system trust store: pass --ca FILE, or set "
                    "ORCH_CA, with the CA that signed it)"
                  : " (it is not signed by the CA in " + ca_file +
                        ": give --ca the CA that signed the server's certificate)";
      break;
    default:
      break;
  }
  return text;
}

// Connects stream (plain, or the TCP layer under TLS) to the URL's host within its expiry.
Result<void> connect(asio::io_context& ioc, beast::tcp_stream& stream, const ServerUrl& url,
                     const std::string& base_url, int timeout_ms) {
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  const auto endpoints = resolver.resolve(url.host, url.port, ec);
  if (ec) {
    return make_error(ErrorKind::unreachable, hint(base_url) + ": cannot resolve host '" +
                                                  url.host + "': " + ec.message() + kWhatToDo);
  }
  // One deadline for the whole exchange: connect, handshake, write and read.
  stream.expires_after(std::chrono::milliseconds(timeout_ms));
  stream.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
  run(ioc);
  if (ec) return unreachable(base_url, ec, timeout_ms);
  return Ok{};
}

// The TLS handshake, checking the certificate's chain and that it names the URL's host.
Result<void> handshake(asio::io_context& ioc, TlsStream& stream, const ServerUrl& url,
                       const std::string& base_url, const RequestOptions& o) {
  SSL* native = stream.native_handle();
  const bool ip = is_ip_literal(url.host);
  if (!ip) SSL_set_tlsext_host_name(native, url.host.c_str());
  X509_VERIFY_PARAM* param = SSL_get0_param(native);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  const int named = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, url.host.c_str())
                       : X509_VERIFY_PARAM_set1_host(param, url.host.c_str(), 0);
  if (named != 1) {
    ERR_clear_error();
    return make_error(ErrorKind::invalid,
                      "cannot check a certificate for host '" + url.host + "' of " + base_url);
  }
  beast::error_code ec;
  stream.async_handshake(ssl::stream_base::client, [&](beast::error_code e) { ec = e; });
  run(ioc);
  const long verify = SSL_get_verify_result(native);
  ERR_clear_error();
  if (!ec) return Ok{};
  return make_error(ErrorKind::unreachable,
                    handshake_failure(base_url, url, verify, ec, o.ca_file, o.timeout_ms));
}

// One request and its answer over a connected (and, for TLS, shaken-hands) stream.
template <class Stream>
Result<HttpResponse> exchange(asio::io_context& ioc, Stream& stream, const ServerUrl& url,
                              const std::string& base_url, http::verb verb,
                              const std::string& target, const std::string& body,
                              const std::string& content_type, const RequestOptions& o) {
  http::request<http::string_body> request{verb, url.prefix + target, 11};
  const bool v6 = url.host.find(':') != std::string::npos;
  request.set(http::field::host, (v6 ? "[" + url.host + "]" : url.host) + ":" + url.port);
  if (!o.token.empty()) request.set(http::field::authorization, "Bearer " + o.token);
  request.set(http::field::user_agent, "orchestrate-cli");
  for (const auto& [name, value] : o.headers) request.set(name, value);
  request.set(http::field::accept, "application/json, text/plain, */*");
  if (!body.empty() || verb == http::verb::post || verb == http::verb::put) {
    request.set(http::field::content_type, content_type);
    request.body() = body;
  }
  request.keep_alive(false);
  request.prepare_payload();
  beast::error_code write_ec;
  http::async_write(stream, request, [&](beast::error_code e, std::size_t) { write_ec = e; });
  run(ioc);

  // Even when the write failed (the server may answer 413 and stop reading), try to read
  // the answer: it says more than "connection reset".
  beast::error_code ec;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxResponseBody);
  http::async_read(stream, buffer, parser, [&](beast::error_code e, std::size_t) { ec = e; });
  run(ioc);
  if (ec && !parser.is_header_done())
    return unreachable(base_url, write_ec ? write_ec : ec, o.timeout_ms);
  // A TLS server that closes without close_notify after a complete answer is not an error.
  if (ec && ec != http::error::end_of_stream && ec != http::error::partial_message &&
      !(parser.is_done() && ec.category() == asio::error::get_ssl_category())) {
    return unreachable(base_url, ec, o.timeout_ms);
  }
  const auto& message = parser.get();
  HttpResponse response;
  response.status = static_cast<int>(message.result_int());
  response.content_type = std::string(message[http::field::content_type]);
  for (const auto& field : message) {
    response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  response.body = message.body();
  beast::error_code ignored;
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
  return response;
}

}  // namespace

Result<HttpResponse> http_request(const std::string& base_url, const std::string& method,
                                  const std::string& target, const std::string& body,
                                  const std::string& content_type, const RequestOptions& o) {
  auto url = parse_server_url(base_url);
  if (!url.ok()) return url.error();
  const http::verb verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) {
    return make_error(ErrorKind::invalid, "unknown HTTP method '" + method + "'");
  }
  try {
    asio::io_context ioc;
    if (!url->tls) {
      beast::tcp_stream stream(ioc);
      if (auto c = connect(ioc, stream, *url, base_url, o.timeout_ms); !c) return c.error();
      return exchange(ioc, stream, *url, base_url, verb, target, body, content_type, o);
    }
    auto ctx = client_tls_context(o.ca_file);
    if (!ctx) return ctx.error();
    TlsStream stream(ioc, **ctx);
    if (auto c = connect(ioc, beast::get_lowest_layer(stream), *url, base_url, o.timeout_ms); !c)
      return c.error();
    if (auto h = handshake(ioc, stream, *url, base_url, o); !h) return h.error();
    return exchange(ioc, stream, *url, base_url, verb, target, body, content_type, o);
  } catch (const std::exception& e) {
    return make_error(ErrorKind::unreachable, hint(base_url) + ": " + e.what() + kWhatToDo);
  }
}

}  // namespace orch
