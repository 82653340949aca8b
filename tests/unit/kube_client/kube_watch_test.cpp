// KubeClient::watch against the TLS test server: chunked streams split anywhere, stopping,
// time limits, broken and refused watches, and watches next to requests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/kube_client/kube_client_fixture.h"

namespace orch::kube_test {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string event(const char* type, int n) {
  return std::string(R"({"type":")") + type + R"(","n":)" + std::to_string(n) + "}";
}

TEST_F(kube_client, WatchDeliversEveryLineInOrderAcrossChunks) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  std::vector<std::string> lines;
  auto w = client.watch("/watch/split?watch=1&resourceVersion=7", [&](const std::string& line) {
    lines.push_back(line);
    return true;
  });
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->status, 200);
  EXPECT_EQ(w->end, WatchEnd::server_closed);
  EXPECT_EQ(w->lines, 5u);
  // Split mid-line, several lines per chunk, "\r\n", an empty line, no final '\n'.
  EXPECT_THAT(lines, ElementsAre(event("ADDED", 1), event("MODIFIED", 2), event("DELETED", 3),
                                 event("ADDED", 4), event("ADDED", 5)));
}

TEST_F(kube_client, WatchStopsWhenTheCallbackSaysSo) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  std::vector<std::string> lines;
  const auto start = Clock::now();
  auto w = client.watch("/watch/endless", [&](const std::string& line) {
    lines.push_back(line);
    return lines.size() < 3;
  });
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_LT(ms_since(start), 2000);
  EXPECT_EQ(w->end, WatchEnd::callback_stopped);
  EXPECT_EQ(w->lines, 3u);
  EXPECT_THAT(lines, ElementsAre(event("ADDED", 1), event("ADDED", 2), event("ADDED", 3)));
}

TEST_F(kube_client, WatchTimeLimitIsANormalEnd) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");

  // A quiet watch: the head, then nothing.
  auto start = Clock::now();
  auto w = client.watch(
      "/watch/quiet", [](const std::string&) { return true; }, milliseconds(300));
  double elapsed = ms_since(start);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->end, WatchEnd::time_limit);
  EXPECT_EQ(w->lines, 0u);
  EXPECT_GE(elapsed, 250);
  EXPECT_LT(elapsed, 2000);

  // A busy one: events until the limit, all in order.
  std::vector<std::string> lines;
  start = Clock::now();
  w = client.watch(
      "/watch/endless",
      [&](const std::string& line) {
        lines.push_back(line);
        return true;
      },
      milliseconds(300));
  elapsed = ms_since(start);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->end, WatchEnd::time_limit);
  EXPECT_LT(elapsed, 2000);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(w->lines, lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i], event("ADDED", static_cast<int>(i) + 1));
  }
}

TEST_F(kube_client, WatchAnsweredWithAnErrorStatus) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  int calls = 0;
  auto w = client.watch("/watch/gone?resourceVersion=1", [&](const std::string&) {
    ++calls;
    return true;
  });
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->status, 410);
  EXPECT_THAT(w->body, HasSubstr("\"reason\":\"Expired\""));
  EXPECT_EQ(calls, 0);

  KubeClient anonymous(
      load("server: \"" + server->url() + "\", certificate-authority: " + certs_->ca_crt, ""),
      "k8s-a");
  w = anonymous.watch("/watch/split", [&](const std::string&) {
    ++calls;
    return true;
  });
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->status, 401);
  EXPECT_EQ(calls, 0);
}

TEST_F(kube_client, WatchWhoseConnectionBreaks) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  std::vector<std::string> lines;
  auto w = client.watch("/watch/break", [&](const std::string& line) {
    lines.push_back(line);
    return true;
  });
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->end, WatchEnd::connection_lost);
  EXPECT_THAT(lines, ElementsAre(event("ADDED", 1)));
  EXPECT_THAT(w->detail, HasSubstr(server->url()));
  EXPECT_THAT(w->detail, HasSubstr("the server closed the connection"));
}

TEST_F(kube_client, WatchDoesNotBlockRequestsAndCanBeInterrupted) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  auto watching = std::async(std::launch::async, [&] {
    return client.watch(
        "/watch/quiet", [](const std::string&) { return true; }, milliseconds(20000));
  });
  std::this_thread::sleep_for(milliseconds(200));
  for (int i = 0; i < 3; ++i) {
    auto r = client.request("GET", "/api/v1/namespaces/default/pods", "", "application/json",
                            milliseconds(2000));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, 200);
  }
  const auto start = Clock::now();
  client.interrupt_watches();
  ASSERT_EQ(watching.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_LT(ms_since(start), 1000);
  auto w = watching.get();
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->end, WatchEnd::interrupted);
  EXPECT_EQ(server->connections(), 2);  // the watch's and the requests' one
}

TEST_F(kube_client, WatchOnADownOrSilentServerFails) {
  const int port = closed_port();
  KubeClient down(load("server: \"https://127.0.0.1:" + std::to_string(port) +
                           "\", certificate-authority: " + certs_->ca_crt,
                       "token: good-token"),
                  "k8s-a");
  auto w = down.watch("/watch/split", [](const std::string&) { return true; });
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(w.error().message, HasSubstr("connection refused"));

  const SilentListener silent;
  KubeClient quiet(load("server: \"https://127.0.0.1:" + std::to_string(silent.port()) +
                            "\", certificate-authority: " + certs_->ca_crt,
                        "token: good-token"),
                   "k8s-a");
  const auto start = Clock::now();
  w = quiet.watch(
      "/watch/split", [](const std::string&) { return true; }, milliseconds(300));
  ASSERT_FALSE(w.ok());
  EXPECT_LT(ms_since(start), 2000);
  EXPECT_EQ(w.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(w.error().message, HasSubstr("no TLS answer within 300 ms"));
}

TEST_F(kube_client, WatchWithTheWrongCaFails) {
  auto server = start_server();
  KubeClient client(
      load("server: \"" + server->url() + "\", certificate-authority: " + certs_->other_ca_crt,
           "token: good-token"),
      "k8s-a");
  auto w = client.watch("/watch/split", [](const std::string&) { return true; });
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.error().message, HasSubstr("site k8s-a: TLS handshake with " + server->url()));
  EXPECT_THAT(w.error().message, HasSubstr("not signed by the CA given by"));
}

}  // namespace
}  // namespace orch::kube_test
