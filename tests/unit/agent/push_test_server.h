#pragma once
// For the agent's push tests (issue 44): an HTTPS server on 127.0.0.1 in the test process
// (OpenSSL, a thread per connection, keep-alive) that takes the push protocol's requests the way
// the server's route does: it stores each task's records once by "seq" and answers
// {"stored":N,"last_seq":M}, or, while told to, answers another status instead.

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace orch::testing {

class PushTestServer {
 public:
  struct Request {
    std::string target;
    std::string authorization;
    std::string content_type;
    nlohmann::json body;  // null when it was not JSON
    int status = 0;       // what the server answered
  };

  PushTestServer(const std::string& cert_file, const std::string& key_file);
  ~PushTestServer();
  PushTestServer(const PushTestServer&) = delete;
  PushTestServer& operator=(const PushTestServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  // The next n requests are answered `status` (with {"error":...}) and store nothing.
  void answer_next(int n, int status);
  std::vector<Request> requests();
  std::vector<nlohmann::json> stored();  // in the order stored (seq order)
  int handshakes_failed() const { return handshakes_failed_.load(); }
  void stop();

 private:
  void accept_loop();
  void serve(int fd);
  Request handle(const std::string& head, const std::string& body, std::string* answer);

  void* ctx_ = nullptr;  // SSL_CTX
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int> handshakes_failed_{0};
  std::thread accept_thread_;
  std::mutex mutex_;  // guards everything below
  bool stopping_ = false;
  std::set<int> open_fds_;
  std::vector<std::thread> threads_;
  std::vector<Request> requests_;
  std::vector<nlohmann::json> stored_;
  std::int64_t last_seq_ = 0;
  int fail_left_ = 0;
  int fail_status_ = 0;
};

}  // namespace orch::testing
