#pragma once
// For the KubeClient tests: certificates made with the openssl CLI, and a small HTTPS server on
// 127.0.0.1 (Boost.Beast + Asio SSL, a thread per connection) that answers a few fixed routes
// the way a Kubernetes API server would, checks a bearer token or a client certificate, and
// streams chunked watch responses. Not a fake API server: just enough to test the client.
//
// Routes (all but /healthz need "Authorization: Bearer <token>" or a client certificate with
// CN=kube-admin signed by the client CA, else 401 with a Status body):
//   /healthz                          200 "ok"
//   /api/v1/namespaces/default/pods   200 PodList; "auth" says how the caller was recognised
//   /echo...                          200 text: method, target, content-type, body
//   /close                            200 with "Connection: close", then closes
//   /drop-later                       200 (keep-alive), then closes the connection 150 ms later
//   /hang                             never answers (until the server stops)
//   /watch/split                      chunked: 5 lines split across chunks, then the end
//   /watch/endless                    chunked: a line every 20 ms until the client goes away
//   /watch/quiet                      chunked head, then nothing
//   /watch/break                      chunked: one line, then the connection is cut
//   /watch/gone                       410 Gone with a Status body

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace orch::kube_test {

// Made once per test process in a temporary directory (removed at exit).
struct Certs {
  std::string dir;
  std::string ca_crt, ca_key;              // "kube-test-ca": signs server, named and client
  std::string other_ca_crt, other_ca_key;  // an unrelated CA: signs rogue
  std::string server_crt, server_key;      // SAN IP:127.0.0.1, DNS:localhost
  std::string named_crt, named_key;        // SAN DNS:kube.internal only
  std::string client_crt, client_key;      // CN=kube-admin, clientAuth, by ca
  std::string rogue_crt, rogue_key;        // CN=kube-admin, by other-ca
};
// Generates the certificates on first use; empty dir when the openssl CLI failed (the message
// is in `error`).
const Certs& certs(std::string* error = nullptr);

class TlsTestServer {
 public:
  struct Options {
    std::string cert_file;
    std::string key_file;
    std::string client_ca_file;  // "" = do not ask for client certificates
    std::string token = "good-token";
    int port = 0;  // 0 = any free port
  };

  explicit TlsTestServer(Options options);
  ~TlsTestServer();
  TlsTestServer(const TlsTestServer&) = delete;
  TlsTestServer& operator=(const TlsTestServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_.load(); }
  int requests() const { return requests_.load(); }
  // Stops accepting, cuts every connection and joins every thread. Idempotent.
  void stop();

 private:
  struct State;
  void accept_loop();
  void serve(int fd);

  Options options_;
  std::unique_ptr<State> state_;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::thread accept_thread_;
  std::mutex mutex_;  // guards the three below
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::set<int> open_fds_;
  std::vector<std::thread> threads_;
};

// A port with a TCP listener that never accepts: connects succeed (the kernel's backlog) and
// then nothing is ever said.
class SilentListener {
 public:
  SilentListener();
  ~SilentListener();
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A port nothing listens on (bound, then closed).
int closed_port();

}  // namespace orch::kube_test
