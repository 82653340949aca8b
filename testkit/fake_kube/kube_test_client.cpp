// The only client file that includes Boost.Asio SSL and Beast.
#include "testkit/fake_kube/kube_test_client.h"

#include <deque>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace orch::fake_kube {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Stream = beast::ssl_stream<beast::tcp_stream>;

struct Connection {
  asio::io_context ioc;
  ssl::context ctx{ssl::context::tls_client};
  std::unique_ptr<Stream> stream;

  // Connects and handshakes; "" or the error.
  std::string connect(const KubeEndpoint& ep, std::chrono::milliseconds timeout) {
    beast::error_code ec;
    if (!ep.ca_file.empty()) {
      ctx.load_verify_file(ep.ca_file, ec);
      if (ec) return "cannot load CA " + ep.ca_file + ": " + ec.message();
    }
    stream = std::make_unique<Stream>(ioc, ctx);
    stream->set_verify_mode(ssl::verify_peer);
    stream->set_verify_callback(ssl::host_name_verification(ep.host));
    tcp::resolver resolver(ioc);
    const auto endpoints = resolver.resolve(ep.host, std::to_string(ep.port), ec);
    if (ec) return "cannot resolve " + ep.host + ": " + ec.message();
    beast::get_lowest_layer(*stream).expires_after(timeout);
    beast::get_lowest_layer(*stream).async_connect(
        endpoints, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
    run();
    if (ec) return "connect: " + ec.message();
    stream->async_handshake(ssl::stream_base::client, [&](beast::error_code e) { ec = e; });
    run();
    if (ec) return "TLS handshake: " + ec.message();
    return "";
  }

  void run() {
    ioc.restart();
    ioc.run();
  }

  http::request<http::string_body> request(const KubeEndpoint& ep, const std::string& method,
                                           const std::string& target, const std::string& body,
                                           const std::string& accept) {
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, ep.host + ":" + std::to_string(ep.port));
    req.set(http::field::user_agent, "fake-kube-test-client");
    req.set(http::field::accept, accept);
    if (!ep.token.empty()) req.set(http::field::authorization, "Bearer " + ep.token);
    if (!body.empty()) {
      // A PATCH body is a JSON merge patch (what orchestrate sends); everything else is JSON.
      req.set(http::field::content_type,
              method == "PATCH" ? "application/merge-patch+json" : "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    return req;
  }
};

}  // namespace

nlohmann::json KubeReply::json() const {
  auto parsed = nlohmann::json::parse(body, nullptr, false);
  return parsed.is_discarded() ? nlohmann::json() : parsed;
}

KubeReply kube_request(const KubeEndpoint& ep, const std::string& method, const std::string& target,
                       const std::string& body, std::chrono::milliseconds timeout,
                       const std::string& accept) {
  KubeReply reply;
  Connection c;
  reply.error = c.connect(ep, timeout);
  if (!reply.error.empty()) return reply;
  auto req = c.request(ep, method, target, body, accept);
  req.keep_alive(false);
  beast::error_code ec;
  http::async_write(*c.stream, req, [&](beast::error_code e, std::size_t) { ec = e; });
  c.run();
  if (ec) {
    reply.error = "write: " + ec.message();
    return reply;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64u << 20);
  http::async_read(*c.stream, buffer, parser, [&](beast::error_code e, std::size_t) { ec = e; });
  c.run();
  if (ec && !parser.is_done()) {
    reply.error = "read: " + ec.message();
    return reply;
  }
  reply.status = static_cast<int>(parser.get().result_int());
  reply.content_type = std::string(parser.get()[http::field::content_type]);
  reply.body = parser.get().body();
  return reply;
}

struct WatchStream::Impl {
  Connection c;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  std::deque<nlohmann::json> events;
  std::string partial;
  bool reading = false;
  bool ended = false;
  int status = 0;

  void take_lines() {
    std::string& body = parser.get().body();
    partial += body;
    body.clear();
    std::size_t start = 0;
    for (auto nl = partial.find('\n'); nl != std::string::npos; nl = partial.find('\n', start)) {
      const std::string line = partial.substr(start, nl - start);
      start = nl + 1;
      if (line.empty()) continue;
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded()) events.push_back(std::move(j));
    }
    partial.erase(0, start);
  }
};

WatchStream::WatchStream() : impl_(std::make_unique<Impl>()) {}
WatchStream::~WatchStream() = default;

std::unique_ptr<WatchStream> WatchStream::open(const KubeEndpoint& ep, const std::string& target,
                                               std::string& error) {
  std::unique_ptr<WatchStream> w(new WatchStream());
  Impl& s = *w->impl_;
  error = s.c.connect(ep, std::chrono::seconds(10));
  if (!error.empty()) return nullptr;
  auto req = s.c.request(ep, "GET", target, "", "application/json");
  beast::error_code ec;
  http::async_write(*s.c.stream, req, [&](beast::error_code e, std::size_t) { ec = e; });
  s.c.run();
  if (!ec) {
    s.parser.body_limit(boost::none);
    http::async_read_header(*s.c.stream, s.buffer, s.parser,
                            [&](beast::error_code e, std::size_t) { ec = e; });
    s.c.run();
  }
  if (ec) {
    error = "watch " + target + ": " + ec.message();
    return nullptr;
  }
  // Reads from here on wait as long as the caller lets them.
  beast::get_lowest_layer(*s.c.stream).expires_never();
  s.status = static_cast<int>(s.parser.get().result_int());
  s.take_lines();
  if (s.parser.is_done()) s.ended = true;
  return w;
}

int WatchStream::status() const {
  return impl_->status;
}

bool WatchStream::ended() const {
  return impl_->ended && impl_->events.empty();
}

std::optional<nlohmann::json> WatchStream::next(std::chrono::milliseconds timeout) {
  Impl& s = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (s.events.empty() && !s.ended) {
    if (!s.reading) {
      s.reading = true;
      http::async_read_some(*s.c.stream, s.buffer, s.parser,
                            [&s](beast::error_code e, std::size_t) {
                              s.reading = false;
                              s.take_lines();
                              if (e || s.parser.is_done()) s.ended = true;
                            });
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    s.c.ioc.restart();
    s.c.ioc.run_for(deadline - now);
  }
  if (s.events.empty()) return std::nullopt;
  auto e = std::move(s.events.front());
  s.events.pop_front();
  return e;
}

}  // namespace orch::fake_kube
