// orch_kube_client: requests (one response each) on a kept-alive connection, the bearer
// token, and KubeClient's public members other than watches.
#include "adapters/kubernetes/kube_client_internal.h"

namespace orch {
namespace kube_client_internal {
namespace {

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

}  // namespace

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

}  // namespace kube_client_internal

using namespace kube_client_internal;

std::string KubeResponse::header(std::string_view name) const {
  const std::string wanted = lower(name);
  for (const auto& [key, value] : headers) {
    if (lower(key) == wanted) return value;
  }
  return "";
}

std::string KubeClient::Impl::current_token() {
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

Result<KubeClient::Impl::Auth> KubeClient::Impl::auth() {
  Auth who;
  if (!exec_source) {
    who.bearer = current_token();
    return who;
  }
  auto credential = exec_source->get();
  if (!credential) return credential.error();
  who.bearer = credential->token;
  who.plugin = std::move(*credential);
  return who;
}

KubeClient::Impl::Exchange KubeClient::Impl::exchange(Connection& c,
                                                      http::request<http::string_body>& req,
                                                      Clock::time_point deadline,
                                                      std::chrono::milliseconds timeout,
                                                      const std::string& what) {
  Exchange out;
  const beast::error_code write_ec =
      c.run(deadline, [&](auto handler) { http::async_write(c.stream, req, std::move(handler)); });
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

void KubeClient::Impl::set_common_headers(http::request<http::string_body>& req,
                                          const std::string& bearer) {
  const bool ipv6 = target.host.find(':') != std::string::npos;
  req.set(http::field::host, (ipv6 ? "[" + target.host + "]" : target.host) + ":" + target.port);
  req.set(http::field::user_agent, kUserAgent);
  req.set(http::field::accept, "application/json");
  if (!bearer.empty()) req.set(http::field::authorization, "Bearer " + bearer);
}

Result<KubeResponse> KubeClient::Impl::request(const std::string& method,
                                               const std::string& path_and_query,
                                               const std::string& body,
                                               const std::string& content_type,
                                               std::chrono::milliseconds timeout) {
  if (config_error) return *config_error;
  auto who = auth();
  if (!who) return who.error();
  auto answer = request_once(method, path_and_query, body, content_type, timeout, *who);
  if (!answer || answer->status != 401 || !who->plugin) return answer;
  // The plugin's credential was refused (revoked, or expired without saying so): one more try
  // with a fresh one. A 401 means the request was not carried out, so even a POST may be sent
  // again.
  exec_source->invalidate(who->plugin->generation);
  who = auth();
  if (!who) return who.error();
  return request_once(method, path_and_query, body, content_type, timeout, *who);
}

Result<KubeResponse> KubeClient::Impl::request_once(
    const std::string& method, const std::string& path_and_query, const std::string& body,
    const std::string& content_type, std::chrono::milliseconds timeout, const Auth& who) {
  auto path_ok = check_path(path_and_query);
  if (!path_ok.ok()) return invalid(path_ok.error().message);
  const http::verb verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) return invalid("unknown HTTP method '" + method + "'");
  const std::string what = method + " " + path_and_query;
  const auto deadline = Clock::now() + timeout;

  http::request<http::string_body> req{verb, target.path_prefix + path_and_query, 11};
  set_common_headers(req, who.bearer);
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
  const ExecCredential* plugin = who.plugin ? &*who.plugin : nullptr;
  // A connection that presented an older plugin certificate is not reused.
  if (plugin != nullptr && !plugin->client_cert_pem.empty() &&
      conn_generation != plugin->generation) {
    conn.reset();
  }
  for (int attempt = 0;; ++attempt) {
    const bool reused = conn != nullptr && conn->idle_and_open();
    if (!reused) {
      conn.reset();
      auto fresh = std::make_unique<Connection>(*ctx);
      ++opened;
      auto opened_ok = open(*fresh, deadline, timeout, plugin);
      if (!opened_ok.ok()) return opened_ok.error();
      conn = std::move(fresh);
      conn_generation = plugin != nullptr ? plugin->generation : 0;
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