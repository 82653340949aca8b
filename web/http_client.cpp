// The only client-side file that includes Boost.Beast.
#include "web/http_client.h"

#include <cctype>
#include <chrono>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace orch {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

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

}  // namespace

Result<ServerUrl> parse_server_url(const std::string& base_url) {
  const auto bad = [&](const std::string& why) {
    return make_error(ErrorKind::invalid, "invalid server URL '" + base_url + "': " + why +
                                              " (expected http://HOST:PORT)");
  };
  const std::string scheme = "http://";
  if (base_url.rfind("https://", 0) == 0) return bad("https is not supported");
  if (base_url.rfind(scheme, 0) != 0) return bad("it must start with http://");
  std::string rest = base_url.substr(scheme.size());
  ServerUrl url;
  const auto slash = rest.find('/');
  if (slash != std::string::npos) {
    url.prefix = rest.substr(slash);
    rest.resize(slash);
    while (!url.prefix.empty() && url.prefix.back() == '/') url.prefix.pop_back();
  }
  std::string port = "80";
  if (!rest.empty() && rest.front() == '[') {  // [::1]:8080
    const auto close = rest.find(']');
    if (close == std::string::npos) return bad("unclosed '['");
    url.host = rest.substr(1, close - 1);
    const std::string tail = rest.substr(close + 1);
    if (!tail.empty()) {
      if (tail.front() != ':') return bad("unexpected text after ']'");
      port = tail.substr(1);
    }
  } else {
    const auto colon = rest.rfind(':');
    url.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
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

Result<HttpResponse> http_request(const std::string& base_url, const std::string& method,
                                  const std::string& target, const std::string& body,
                                  const std::string& content_type, int timeout_ms,
                                  const std::string& token) {
  auto url = parse_server_url(base_url);
  if (!url.ok()) return url.error();
  const http::verb verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) {
    return make_error(ErrorKind::invalid, "unknown HTTP method '" + method + "'");
  }
  try {
    asio::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::tcp_stream stream(ioc);
    beast::error_code ec;
    const auto endpoints = resolver.resolve(url->host, url->port, ec);
    if (ec) {
      return make_error(ErrorKind::unreachable, hint(base_url) + ": cannot resolve host '" +
                                                    url->host + "': " + ec.message() + kWhatToDo);
    }
    // One deadline for the whole exchange: connect, write and read.
    stream.expires_after(std::chrono::milliseconds(timeout_ms));
    stream.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
    run(ioc);
    if (ec) return unreachable(base_url, ec, timeout_ms);

    http::request<http::string_body> request{verb, url->prefix + target, 11};
    const bool v6 = url->host.find(':') != std::string::npos;
    request.set(http::field::host, (v6 ? "[" + url->host + "]" : url->host) + ":" + url->port);
    if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
    request.set(http::field::user_agent, "orchestrate-cli");
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
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBody);
    http::async_read(stream, buffer, parser, [&](beast::error_code e, std::size_t) { ec = e; });
    run(ioc);
    if (ec && !parser.is_header_done())
      return unreachable(base_url, write_ec ? write_ec : ec, timeout_ms);
    if (ec && ec != http::error::end_of_stream && ec != http::error::partial_message) {
      return unreachable(base_url, ec, timeout_ms);
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
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    return response;
  } catch (const std::exception& e) {
    return make_error(ErrorKind::unreachable, hint(base_url) + ": " + e.what() + kWhatToDo);
  }
}

}  // namespace orch
