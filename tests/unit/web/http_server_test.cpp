// HttpServer and http_request over real loopback sockets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/unit/web/fake_backend.h"
#include "tests/unit/web/raw_socket.h"
#include "web/api_routes.h"
#include "web/http/http_client.h"
#include "web/http/http_server.h"

namespace orch {
namespace {

using Clock = std::chrono::steady_clock;

using testing::RawSocket;

class HttpServerTest : public ::testing::Test {
 protected:
  void start(ServerOptions options = {}) {
    options.port = 0;
    router_ = std::make_unique<Router>(make_api_router(backend));
    server_ = std::make_unique<HttpServer>(options, [this](const HttpRequest& request) {
      if (request.path == "/throw") throw std::runtime_error("handler blew up");
      if (request.path == "/slow") {
        ++slow_started;
        gate_.wait();  // a command waiting for a busy brain, until the test opens the gate
        return json_response(200, {{"slow", "done"}});
      }
      return router_->dispatch(request);
    });
    auto started = server_->start();
    ASSERT_TRUE(started.ok()) << started.error().message;
    ASSERT_GT(server_->port(), 0);
    url_ = "http://127.0.0.1:" + std::to_string(server_->port());
  }
  // Lanes as the real server has them: the probe, and one thread for everything else.
  static ServerOptions probe_and_one_command_thread(std::size_t max_waiting) {
    ServerOptions options;
    options.lanes = {{"probe", 1, 16}, {"command", 1, max_waiting}};
    options.lane_of = [](const HttpRequest& r) { return r.path == "/healthz" ? 0u : 1u; };
    return options;
  }
  void open_gate() {
    if (!opened_) gate_open_.set_value();
    opened_ = true;
  }
  void TearDown() override {
    open_gate();
    if (server_) server_->stop();
  }
  void wait_for_slow(int n) {
    for (int i = 0; i < 500 && slow_started.load() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(slow_started.load(), n);
  }

  std::promise<void> gate_open_;
  std::shared_future<void> gate_ = gate_open_.get_future().share();
  bool opened_ = false;
  std::atomic<int> slow_started{0};
  testing::FakeBackend backend;
  std::unique_ptr<Router> router_;
  std::unique_ptr<HttpServer> server_;
  std::string url_;
};

TEST_F(HttpServerTest, RoundTrip) {
  start();
  auto r = http_request(url_, "GET", "/api/v1/clusters");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(r->body)["clusters"][0]["name"], "alpha");

  r = http_request(url_, "POST", "/api/v1/jobs?source=a.yaml", "name: a\n", "application/yaml");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->header("location"), "/api/v1/jobs/3");
  EXPECT_EQ(backend.last_body, "name: a\n");
  EXPECT_EQ(backend.last_source, "a.yaml");

  r = http_request(url_, "GET", "/api/v1/jobs/abc");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->content_type, "application/problem+json");
}

TEST_F(HttpServerTest, BodyOverTheLimitIs413) {
  start();
  auto r = http_request(url_, "POST", "/api/v1/jobs", std::string(2 << 20, 'x'), "text/yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->content_type, "application/problem+json");
  EXPECT_TRUE(backend.last_body.empty());
  // The server is still fine afterwards.
  EXPECT_EQ(http_request(url_, "GET", "/healthz")->status, 200);
}

TEST_F(HttpServerTest, ARouteWithALargerBodyLimitTakesMoreAndNoOtherDoes) {
  ServerOptions options;
  options.max_body = 1024;
  options.body_limits = {{"PUT", "/api/v1/code/", 8192}};
  start(options);
  // Larger than max_body, within the upload's own limit: read and answered by the route (the
  // fake API has no such route: 404, not 413).
  auto r =
      http_request(url_, "PUT", "/api/v1/code/abc", std::string(4096, 'x'), "application/x-tar");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 404);
  r = http_request(url_, "PUT", "/api/v1/code/abc", std::string(9000, 'x'), "application/x-tar");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 413);
  EXPECT_THAT(r->body, ::testing::HasSubstr("limit of 8192 bytes"));
  // Another method or path keeps max_body.
  r = http_request(url_, "POST", "/api/v1/code/abc", std::string(4096, 'x'), "application/x-tar");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 413);
  r = http_request(url_, "PUT", "/api/v1/jobs", std::string(4096, 'x'), "text/yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 413);
  EXPECT_THAT(r->body, ::testing::HasSubstr("limit of 1024 bytes"));
}

TEST_F(HttpServerTest, MalformedRequestLineIs400) {
  start();
  RawSocket socket(server_->port());
  socket.send("THIS IS NOT HTTP\r\n\r\n");
  const std::string reply = socket.read_all();
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
  EXPECT_NE(reply.find("application/problem+json"), std::string::npos);
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  start();
  RawSocket socket(server_->port());
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  socket.send(request + request);
  const std::string replies = socket.read_until("\"status\":\"ok\"", 2);
  std::size_t count = 0;
  for (auto p = replies.find("HTTP/1.1 200"); p != std::string::npos;
       p = replies.find("HTTP/1.1 200", p + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 2u) << replies;
}

TEST_F(HttpServerTest, ManySequentialRequests) {
  start();
  for (int i = 0; i < 200; ++i) {
    auto r = http_request(url_, "GET", "/api/v1/jobs/1");
    ASSERT_TRUE(r.ok()) << i << ": " << r.error().message;
    ASSERT_EQ(r->status, 200);
  }
}

TEST_F(HttpServerTest, AHealthProbeIsAnsweredWhileEveryCommandThreadWaits) {
  start(probe_and_one_command_thread(16));
  RawSocket first(server_->port());
  RawSocket second(server_->port());
  first.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  second.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  wait_for_slow(1);  // the one command thread is held; the second command queues behind it

  auto probe = http_request(url_, "GET", "/healthz", "", "application/json", 2000);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  EXPECT_EQ(probe->status, 200);

  open_gate();
  EXPECT_NE(first.read_until("\"slow\":\"done\"", 1).find("200 OK"), std::string::npos);
  EXPECT_NE(second.read_until("\"slow\":\"done\"", 1).find("200 OK"), std::string::npos);
}

TEST_F(HttpServerTest, AFullLaneAnswers503AtOnceWithRetryAfter) {
  start(probe_and_one_command_thread(1));
  RawSocket held(server_->port());
  held.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  wait_for_slow(1);

  RawSocket refused(server_->port());
  refused.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  const std::string answer = refused.read_until("retry shortly", 1);
  EXPECT_NE(answer.find("HTTP/1.1 503"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Retry-After: 1"), std::string::npos) << answer;
  EXPECT_NE(answer.find("1 command requests are waiting"), std::string::npos) << answer;
  EXPECT_EQ(slow_started.load(), 1) << "refused, not queued";
  open_gate();
  EXPECT_NE(held.read_until("\"slow\":\"done\"", 1).find("200 OK"), std::string::npos);
}

TEST_F(HttpServerTest, AnIdleClientDoesNotBlockOthers) {
  ServerOptions options;
  options.io_threads = 1;
  options.lanes = {{"all", 1, 16}};
  start(options);
  RawSocket idle(server_->port());
  idle.send("GET /healthz HTTP/1.1\r\n");  // and never finishes
  auto r = http_request(url_, "GET", "/healthz", "", "application/json", 2000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTest, IdleConnectionsTimeOut) {
  ServerOptions options;
  options.idle_timeout = std::chrono::milliseconds(200);
  start(options);
  RawSocket idle(server_->port());
  const auto begin = Clock::now();
  EXPECT_EQ(idle.read_all(), "");
  EXPECT_LT(Clock::now() - begin, std::chrono::seconds(3));
}

TEST_F(HttpServerTest, StopIsPromptWithAnIdleClient) {
  start();
  RawSocket idle(server_->port());
  idle.send("GET /healthz HTTP/1.1\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto begin = Clock::now();
  server_->stop();
  EXPECT_LT(Clock::now() - begin, std::chrono::seconds(1));
  EXPECT_EQ(idle.read_all(), "");  // the connection was closed, not left hanging
  server_->stop();                 // twice is fine
}

TEST_F(HttpServerTest, AThrowingHandlerIs500) {
  start();
  auto r = http_request(url_, "GET", "/throw");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("handler blew up"), std::string::npos);
}

TEST_F(HttpServerTest, BusyPortIsAnIoError) {
  start();
  ServerOptions options;
  options.port = server_->port();
  HttpServer second(options, [](const HttpRequest&) { return HttpResponse{}; });
  auto started = second.start();
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().kind, ErrorKind::io);
  EXPECT_NE(started.error().message.find("cannot listen on"), std::string::npos);
}

TEST(HttpServerOptions, BadBindAddressIsInvalid) {
  ServerOptions options;
  options.bind = "not-an-ip";
  HttpServer server(options, [](const HttpRequest&) { return HttpResponse{}; });
  auto started = server.start();
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().kind, ErrorKind::invalid);
}

TEST(HttpClient, ConnectionRefusedIsUnreachableWithAHint) {
  int port = 0;
  {  // a port that was just free
    HttpServer server(ServerOptions{"127.0.0.1", 0},
                      [](const HttpRequest&) { return HttpResponse{}; });
    ASSERT_TRUE(server.start().ok());
    port = server.port();
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto r = http_request(url, "GET", "/healthz");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_EQ(r.error().message, "cannot reach orchestrate server at " + url +
                                   ": connection refused (is `orchestrate serve` running? set "
                                   "--server or ORCH_URL)");
}

TEST(HttpClient, BadUrlsAreInvalid) {
  for (const char* url :
       {"127.0.0.1:8080", "https://", "http://", "http://h:abc", "http://h:70000", "ftp://h"}) {
    auto r = http_request(url, "GET", "/healthz");
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid) << url;
    EXPECT_NE(r.error().message.find("invalid server URL"), std::string::npos);
  }
  auto parsed = parse_server_url("http://[::1]:9000/orch/");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->host, "::1");
  EXPECT_EQ(parsed->port, "9000");
  EXPECT_EQ(parsed->prefix, "/orch");
}

}  // namespace
}  // namespace orch
