// orch_kube_client: watches (a long GET read as lines) and their interruption.
#include "adapters/kubernetes/kube_client_internal.h"

namespace orch {
namespace {

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

using namespace kube_client_internal;

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

// Registers a watch connection for interrupt_watches() for its lifetime.
class KubeClient::Impl::WatchRegistration {
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

void KubeClient::Impl::interrupt_watches() {
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

Result<KubeWatchResult> KubeClient::Impl::watch(
    const std::string& path_and_query, const std::function<bool(const std::string&)>& on_event,
    std::chrono::milliseconds timeout) {
  if (config_error) return *config_error;
  auto path_ok = check_path(path_and_query);
  if (!path_ok.ok()) return invalid(path_ok.error().message);
  const std::string what = "GET " + path_and_query + " (watch)";
  const auto start = Clock::now();
  const auto end_deadline = start + timeout;
  const auto answer_timeout = std::min(timeout, kWatchAnswerTimeout);
  const auto answer_deadline = start + answer_timeout;

  auto who = auth();
  if (!who) return who.error();
  Connection c(*ctx);
  const WatchRegistration registration(*this, c);
  KubeWatchResult result;
  const auto interrupted = [&] {
    result.end = WatchEnd::interrupted;
    c.close();
    return result;
  };

  auto opened_ok = open(c, answer_deadline, answer_timeout, who->plugin ? &*who->plugin : nullptr);
  if (!opened_ok.ok()) return opened_ok.error();
  if (c.interrupted) return interrupted();

  http::request<http::string_body> req{http::verb::get, target.path_prefix + path_and_query, 11};
  set_common_headers(req, who->bearer);
  req.keep_alive(false);
  req.prepare_payload();
  beast::error_code ec = c.run(
      answer_deadline, [&](auto handler) { http::async_write(c.stream, req, std::move(handler)); });
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
  // A refused plugin credential: the caller's next watch (or request) gets a fresh one.
  if (result.status == 401 && who->plugin) exec_source->invalidate(who->plugin->generation);
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

}  // namespace orch
