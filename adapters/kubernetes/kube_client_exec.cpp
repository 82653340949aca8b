// orch_kube_client: pods/exec over a WebSocket (the channel protocol of kubectl exec).
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <nlohmann/json.hpp>

#include "adapters/kubernetes/kube_client_internal.h"
#include "scheduler/common/percent_encoding.h"

namespace orch {

using namespace kube_client_internal;
namespace websocket = beast::websocket;

namespace {

constexpr std::size_t kMaxMessage = 64 << 20;
constexpr char kStdin = 0;
constexpr char kStatus = 3;
constexpr unsigned char kClose = 255;

// The exit code in a NonZeroExitCode Status, or the Status message as a failure.
void read_status(const std::string& text, KubeExecResult& result) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    result.failure = "unreadable exec Status: " + text.substr(0, 200);
    return;
  }
  if (j.value("status", std::string()) == "Success") return;
  if (j.value("reason", std::string()) == "NonZeroExitCode") {
    const auto& causes = j["details"]["causes"];
    if (causes.is_array()) {
      for (const auto& c : causes) {
        if (c.value("reason", std::string()) == "ExitCode") {
          result.exit_code = std::atoi(c.value("message", std::string("1")).c_str());
          return;
        }
      }
    }
    result.exit_code = 1;
    return;
  }
  result.failure = j.value("message", std::string("the command failed"));
  if (result.failure.empty()) result.failure = "the command failed";
}

}  // namespace

Result<KubeExecResult> KubeClient::Impl::exec(const std::string& path_and_query,
                                              const ExecInput& input, const ExecOutput& output,
                                              std::chrono::milliseconds timeout) {
  if (config_error) return *config_error;
  auto who = auth();
  if (!who) return who.error();
  const std::string what = "exec " + path_and_query.substr(0, path_and_query.find('?'));
  const auto deadline = Clock::now() + timeout;
  Connection c(*ctx);
  auto opened_ok = open(c, deadline, timeout, who->plugin ? &*who->plugin : nullptr);
  if (!opened_ok.ok()) return opened_ok.error();

  websocket::stream<TlsStream&> ws(c.stream);
  ws.read_message_max(kMaxMessage);
  const std::string bearer = who->bearer;
  ws.set_option(websocket::stream_base::decorator([bearer](websocket::request_type& req) {
    req.set(http::field::user_agent, kUserAgent);
    req.set(http::field::sec_websocket_protocol, "v5.channel.k8s.io, v4.channel.k8s.io");
    if (!bearer.empty()) req.set(http::field::authorization, "Bearer " + bearer);
  }));
  websocket::response_type answer;
  const bool ipv6 = target.host.find(':') != std::string::npos;
  const std::string host = (ipv6 ? "[" + target.host + "]" : target.host) + ":" + target.port;
  beast::error_code ec = c.run(deadline, [&](auto handler) {
    ws.async_handshake(answer, host, target.path_prefix + path_and_query, std::move(handler));
  });
  if (ec == beast::error::timeout) {
    return unreachable(target.server + " did not answer " + what + " within " +
                       std::to_string(ms(timeout)) + " ms");
  }
  if (ec) {
    const int status = static_cast<int>(answer.result_int());
    if (status == 401 && who->plugin) exec_source->invalidate(who->plugin->generation);
    if (status >= 400) {
      std::string why = answer.body().substr(0, 300);
      auto j = nlohmann::json::parse(answer.body(), nullptr, false);
      if (j.is_object() && j.contains("message") && j["message"].is_string()) {
        why = j["message"].get<std::string>();
      }
      return make_error(status >= 500 || status == 401 || status == 403 ? ErrorKind::unreachable
                                                                        : ErrorKind::invalid,
                        prefix() + what + " answered " + std::to_string(status) + ": " + why);
    }
    return unreachable(what + " on " + target.server + " failed: " + describe_ec(ec));
  }
  const bool v5 = std::string(answer[http::field::sec_websocket_protocol]) == "v5.channel.k8s.io";
  ws.binary(true);
  KubeExecResult result;
  const auto abandoned = [&](const std::string& why) {
    c.close();
    return make_error(ErrorKind::conflict, prefix() + what + ": " + why);
  };
  const auto send = [&](std::string message) {
    return c.run(deadline,
                 [&](auto handler) { ws.async_write(asio::buffer(message), std::move(handler)); });
  };
  if (input) {
    if (!v5) {
      return make_error(ErrorKind::unsupported,
                        prefix() + target.server +
                            " speaks only v4.channel.k8s.io, which cannot close stdin (needs "
                            "Kubernetes 1.30 or later)");
    }
    for (;;) {
      std::optional<std::string> data = input();
      if (!data) return abandoned("stopped while sending");
      if (data->empty()) break;
      result.bytes_in += data->size();
      std::string message(1, kStdin);
      message += *data;
      if (ec = send(std::move(message)); ec) {
        return unreachable("connection to " + target.server + " failed during " + what + ": " +
                           describe_ec(ec));
      }
    }
    std::string close_stdin{static_cast<char>(kClose), kStdin};
    if (ec = send(close_stdin); ec) {
      return unreachable("connection to " + target.server + " failed during " + what + ": " +
                         describe_ec(ec));
    }
  }
  bool have_status = false;
  for (;;) {
    beast::flat_buffer buffer;
    ec = c.run(deadline, [&](auto handler) { ws.async_read(buffer, std::move(handler)); });
    if (ec == websocket::error::closed) break;
    if (ec == beast::error::timeout) {
      return unreachable(what + " on " + target.server + " did not finish within " +
                         std::to_string(ms(timeout)) + " ms");
    }
    if (ec) {
      if (have_status) break;  // the server went away after saying how it ended
      return unreachable("connection to " + target.server + " failed during " + what + ": " +
                         describe_ec(ec));
    }
    std::string message = beast::buffers_to_string(buffer.data());
    if (message.empty()) continue;
    const char channel = message[0];
    std::string_view data(message);
    data.remove_prefix(1);
    if (channel == kStatus) {
      read_status(std::string(data), result);
      have_status = true;
      continue;
    }
    if (channel == 1) result.bytes_out += data.size();
    if ((channel == 1 || channel == 2) && !output(channel, data)) {
      return abandoned("stopped while receiving");
    }
  }
  if (!have_status) {
    return unreachable(what + " on " + target.server +
                       " ended without saying how the command ended");
  }
  c.close();
  return result;
}

Result<KubeExecResult> KubeClient::exec(const std::string& namespace_, const std::string& pod,
                                        const std::string& container,
                                        const std::vector<std::string>& command,
                                        const ExecInput& input, const ExecOutput& output,
                                        std::chrono::milliseconds timeout) {
  std::string path = "/api/v1/namespaces/" + namespace_ + "/pods/" + pod +
                     "/exec?container=" + percent_encode(container) + "&stdout=true&stderr=true";
  if (input) path += "&stdin=true";
  for (const auto& arg : command) path += "&command=" + percent_encode(arg);
  try {
    return impl_->exec(path, input, output, timeout);
  } catch (const std::exception& e) {
    return impl_->unreachable("exec in pod " + pod + " failed: " + e.what());
  }
}

}  // namespace orch
