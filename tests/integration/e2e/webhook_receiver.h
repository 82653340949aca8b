#pragma once
// A webhook endpoint on loopback for the e2e tests: it records every delivery it accepts (the
// orchestrate headers and the body), and answers 503 to the first `refuse_first` tries.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "web/http/http_server.h"

namespace orch::e2e {

struct Delivery {
  std::string event, id, timestamp, signature, body;
};

class WebhookReceiver {
 public:
  explicit WebhookReceiver(int refuse_first = 0) : refuse_first_(refuse_first) {
    ServerOptions o;
    o.port = 0;
    server_ = std::make_unique<HttpServer>(o, [this](const HttpRequest& r) {
      std::lock_guard<std::mutex> lock(mu_);
      HttpResponse answer;
      answer.content_type = "text/plain";
      if (++calls_ <= refuse_first_) {
        answer.status = 503;
        return answer;
      }
      got_.push_back({r.header("x-orchestrate-event"), r.header("x-orchestrate-delivery"),
                      r.header("x-orchestrate-timestamp"), r.header("x-orchestrate-signature"),
                      r.body});
      answer.body = "ok";
      return answer;
    });
  }
  ~WebhookReceiver() { server_->stop(); }
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  bool start() { return server_->start().ok(); }
  // http://127.0.0.1:PORT + path.
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + path;
  }
  std::vector<Delivery> got() {
    std::lock_guard<std::mutex> lock(mu_);
    return got_;
  }
  // Requests answered, refused ones included.
  int calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  const int refuse_first_;
  std::unique_ptr<HttpServer> server_;
  std::mutex mu_;
  int calls_ = 0;
  std::vector<Delivery> got_;
};

}  // namespace orch::e2e
