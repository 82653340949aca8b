#pragma once
// A small synchronous HTTPS client for one Kubernetes API server (Boost.Beast and OpenSSL are
// kept in kube_client_*.cpp). Built from a KubeTarget (kube_config.h):
//
// - The server's certificate is verified against the kubeconfig's CA only (the system trust
//   store only when the kubeconfig gives no CA), and must name the server's host, or
//   tls-server-name when set (DNS or IP subjectAltName). insecure-skip-tls-verify turns all
//   verification off (load_kube_target adds the warning to log).
// - A client certificate is presented when configured; a bearer token is sent as
//   "Authorization: Bearer ..." (from tokenFile: re-read at most once a minute, so rotated
//   tokens are picked up).
// - request() reuses one keep-alive TLS connection (calls are serialised by a mutex; a caller
//   that cannot have the connection within its own timeout gets ErrorKind::unreachable; the
//   connection is re-opened when the server closed it or it failed). watch() opens a connection
//   of its own per call, so a long watch never blocks requests; several watches may run at once.
// - Every call is bounded by its timeout (DNS included). Errors are values: ErrorKind::unreachable
//   when the server cannot be reached, refuses TLS or does not answer in time (messages name the
//   site and the server); ErrorKind::invalid for local problems (bad certificate or key in the
//   kubeconfig, bad arguments). Any HTTP status is a successful Result.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adapters/kubernetes/kube_config.h"
#include "scheduler/common/result.h"

namespace orch {

struct KubeResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;  // as received

  // The first header of that name (case-insensitive), "" when absent.
  std::string header(std::string_view name) const;
};

// Why a watch() that succeeded stopped.
enum class WatchEnd {
  server_closed,     // the server ended the response (e.g. its timeoutSeconds passed)
  callback_stopped,  // on_event returned false
  time_limit,        // the call's timeout passed (a normal end for a quiet watch)
  connection_lost,   // the connection broke after the response started (see `detail`)
  interrupted,       // interrupt_watches() was called
};
const char* to_string(WatchEnd end);

struct KubeWatchResult {
  int status = 0;    // the response's HTTP status (0: interrupted before it came)
  std::string body;  // when status is not 2xx: the response body (a Kubernetes Status)
  WatchEnd end = WatchEnd::server_closed;
  std::size_t lines = 0;  // lines passed to on_event
  std::string detail;     // connection_lost: what happened
};

// How a pods/exec command ended.
struct KubeExecResult {
  int exit_code = 0;  // 0: Success; else the command's exit code
  // Set when the Status is a Failure that is not an exit code (the command could not run).
  std::string failure;
  std::uint64_t bytes_in = 0;   // sent on stdin
  std::uint64_t bytes_out = 0;  // received on stdout
};

// What exec() asks for stdin: the next bytes, "" at the end (stdin is then closed), nullopt to
// abandon the command (the connection is closed; exec fails with ErrorKind::conflict).
using ExecInput = std::function<std::optional<std::string>()>;
// Each piece of output as it arrives: channel 1 stdout, 2 stderr. false abandons the command.
using ExecOutput = std::function<bool(int channel, std::string_view data)>;

class KubeClient {
 public:
  static constexpr std::chrono::milliseconds kDefaultRequestTimeout{30000};
  static constexpr std::chrono::milliseconds kDefaultWatchTimeout{300000};
  // A watch whose response has not started within this (or its timeout, if shorter) fails.
  static constexpr std::chrono::milliseconds kWatchAnswerTimeout{30000};

  // `site` names the cluster in messages ("site k8s-a: ..."). A bad certificate or key in the
  // target does not throw: usable() and every call return the ErrorKind::invalid error.
  KubeClient(KubeTarget target, std::string site);
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // Ok, or the local configuration problem that makes every call fail.
  Result<void> usable() const;

  // One HTTP exchange: `path_and_query` ("/api/v1/nodes?limit=500") is appended to the server's
  // path prefix. A body is sent with `content_type` when non-empty or the method is POST, PUT or
  // PATCH. `timeout` bounds the whole call (connect, TLS handshake, write, read). A request on
  // a reused connection that the server had closed is retried once on a new connection when
  // nothing of the answer arrived and the method is idempotent (or nothing could be written).
  Result<KubeResponse> request(const std::string& method, const std::string& path_and_query,
                               const std::string& body = "",
                               const std::string& content_type = "application/json",
                               std::chrono::milliseconds timeout = kDefaultRequestTimeout);

  // A streaming GET (a Kubernetes watch: "...?watch=1&resourceVersion=N"), on a connection of
  // its own. Calls on_event with every complete line (without its '\n'; empty lines skipped),
  // in order, until the server ends the response, on_event returns false, `timeout` passes or
  // interrupt_watches() is called. Reaching the timeout is not an error once the response has
  // started: it returns Ok with end = time_limit, so callers loop with a bounded timeout. A
  // non-2xx answer (e.g. 410 Gone) is Ok too, with its status and body and no events.
  // Errors (unreachable): cannot connect, TLS fails, or no response head within
  // min(timeout, kWatchAnswerTimeout). on_event runs on the calling thread; exceptions from it
  // propagate.
  Result<KubeWatchResult> watch(const std::string& path_and_query,
                                const std::function<bool(const std::string& line)>& on_event,
                                std::chrono::milliseconds timeout = kDefaultWatchTimeout);

  // Runs `command` in a running pod's container through pods/exec over a WebSocket
  // (v5.channel.k8s.io, on a connection of its own), as kubectl exec does: stdin from `input`
  // when given (sent to its end first, then closed; v5 is needed for that), stdout and stderr
  // to `output`. Ok once the server's Status came: the exit code, or `failure` for a command
  // that could not run. Errors: unreachable (no connection, no answer within `timeout` for
  // the whole exchange), invalid (the server refused the upgrade: its Status message, e.g.
  // "container not found"), conflict (input or output abandoned it).
  Result<KubeExecResult> exec(const std::string& namespace_, const std::string& pod,
                              const std::string& container, const std::vector<std::string>& command,
                              const ExecInput& input, const ExecOutput& output,
                              std::chrono::milliseconds timeout);

  // Makes every watch() in progress return soon (end = interrupted); later watches are not
  // affected. For shutting a site down. Thread-safe.
  void interrupt_watches();

  // Drops the keep-alive connection (the next request opens a new one).
  void disconnect();

  // How many TCP connections request() has opened so far (for tests and diagnostics).
  std::size_t connections_opened() const;

  const KubeTarget& target() const;
  const std::string& site() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orch
