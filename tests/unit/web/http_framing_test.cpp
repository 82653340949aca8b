// Request smuggling (issue 37): a request whose body could be framed two ways is answered 501
// (or 400 for a malformed one) with "Connection: close", and nothing the client sent after it
// is read as a request: exactly one answer, then the end of the connection. Over real loopback
// sockets, against HttpServer with the API router over the fake backend.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "tests/unit/web/fake_backend.h"
#include "tests/unit/web/raw_socket.h"
#include "web/api_routes.h"
#include "web/http/http_server.h"

namespace orch::testing {
namespace {

// What a smuggler sends: a POST whose headers say `framing`, a body that is itself a request
// (what a proxy in front that framed it otherwise would pass on as one), then a pipelined GET.
std::string smuggling(const std::string& framing, const std::string& version = "HTTP/1.1") {
  const std::string hidden = "POST /api/v1/jobs/1/cancel HTTP/1.1\r\nHost: x\r\n\r\n";
  return "POST /api/v1/jobs " + version + "\r\nHost: x\r\nContent-Type: application/yaml\r\n" +
         framing + "\r\n\r\n" + hidden + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
}

// How many answers came: each has one Server header.
int answers(const std::string& reply) {
  const std::string needle = "\r\nServer: orchestrate\r\n";
  int n = 0;
  for (auto p = reply.find(needle); p != std::string::npos; p = reply.find(needle, p + 1)) ++n;
  return n;
}

class HttpFramingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_ = std::make_unique<Router>(make_api_router(backend_));
    ServerOptions options;
    options.port = 0;
    server_ = std::make_unique<HttpServer>(options, [this](const HttpRequest& request) {
      ++handled_;
      return router_->dispatch(request);
    });
    auto started = server_->start();
    ASSERT_TRUE(started.ok()) << started.error().message;
  }
  void TearDown() override { server_->stop(); }

  // Sends `bytes` on a fresh connection and reads until the server closes it.
  std::string exchange(const std::string& bytes, bool& closed) {
    RawSocket socket(server_->port());
    socket.send(bytes);
    std::string reply = socket.read_all();
    closed = socket.closed();
    return reply;
  }

  // Exactly one answer, with `status`, saying it closes; then the connection's end; no request
  // reached the handler.
  void expect_one_answer_then_eof(const std::string& bytes, int status, const std::string& what) {
    bool closed = false;
    const std::string reply = exchange(bytes, closed);
    EXPECT_EQ(reply.rfind("HTTP/1.1 " + std::to_string(status), 0), 0u) << what << "\n" << reply;
    EXPECT_EQ(answers(reply), 1) << what << "\n" << reply;
    EXPECT_NE(reply.find("Connection: close"), std::string::npos) << what << "\n" << reply;
    EXPECT_NE(reply.find("application/problem+json"), std::string::npos) << what;
    EXPECT_TRUE(closed) << what << ": the server did not close the connection";
    EXPECT_EQ(handled_.load(), 0) << what << ": a request reached the handler";
    EXPECT_TRUE(backend_.last_body.empty()) << what;
    handled_ = 0;
  }

  FakeBackend backend_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<HttpServer> server_;
  std::atomic<int> handled_{0};
};

TEST_F(HttpFramingTest, AnUnknownTransferEncodingIs501AndTheBodyIsNeverARequest) {
  bool closed = false;
  const std::string reply = exchange(smuggling("Transfer-Encoding: xchunked"), closed);
  EXPECT_EQ(reply.rfind("HTTP/1.1 501", 0), 0u) << reply;
  EXPECT_NE(reply.find("Transfer-Encoding \\\"xchunked\\\" is not supported"), std::string::npos)
      << reply;
  EXPECT_EQ(answers(reply), 1) << reply;
  EXPECT_TRUE(closed);
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(HttpFramingTest, EveryTransferEncodingButChunkedAloneIs501) {
  const std::vector<std::string> framings = {
      "Transfer-Encoding: xchunked",
      "Transfer-Encoding: chunked, gzip",
      "Transfer-Encoding: gzip",
      "Transfer-Encoding: gzip, chunked",
      "Transfer-Encoding: identity",
      "Transfer-Encoding: chunked\r\nContent-Length: 5",
      "Content-Length: 5\r\nTransfer-Encoding: chunked",
      "Transfer-Encoding: gzip\r\nContent-Length: 5",
      "Content-Length: 5\r\nTransfer-Encoding: xchunked",
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
      "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked",
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip",
      "Transfer-Encoding: chunked\r\nTransfer-encoding: chunked",
  };
  for (const std::string& framing : framings) {
    expect_one_answer_then_eof(smuggling(framing), 501, framing);
  }
  expect_one_answer_then_eof(smuggling("Transfer-Encoding: chunked", "HTTP/1.0"), 501,
                             "chunked over HTTP/1.0");
}

TEST_F(HttpFramingTest, AMalformedRequestIs400AndCloses) {
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  expect_one_answer_then_eof("GET /healthz HTTP/1.1\r\n\r\n" + get, 400, "no Host");
  expect_one_answer_then_eof("GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n" + get, 400,
                             "two Hosts");
  expect_one_answer_then_eof(
      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 2\r\n\r\n" + get, 400, "two lengths");
  expect_one_answer_then_eof("NOT HTTP\r\n\r\n" + get, 400, "no request line");
}

TEST_F(HttpFramingTest, ChunkedInAnyCaseIsReadAndTheConnectionGoesOn) {
  bool closed = false;
  const std::string reply = exchange(
      "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/yaml\r\n"
      "Transfer-Encoding:  Chunked \r\n\r\n8\r\nname: a\n\r\n0\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      closed);
  EXPECT_EQ(reply.rfind("HTTP/1.1 201", 0), 0u) << reply;
  EXPECT_EQ(answers(reply), 2) << reply;
  EXPECT_NE(reply.find("\"status\":\"ok\""), std::string::npos) << reply;
  EXPECT_EQ(backend_.last_body, "name: a\n");
  EXPECT_EQ(handled_.load(), 2);
}

TEST_F(HttpFramingTest, AnHttp10RequestNeedsNoHost) {
  bool closed = false;
  const std::string reply = exchange("GET /healthz HTTP/1.0\r\n\r\n", closed);
  EXPECT_EQ(reply.rfind("HTTP/1.0 200", 0), 0u) << reply;
}

}  // namespace
}  // namespace orch::testing
