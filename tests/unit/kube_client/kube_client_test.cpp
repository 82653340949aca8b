// KubeClient::request against the TLS test server: server verification, authentication,
// connection reuse, and bounded failures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/unit/kube_client/kube_client_fixture.h"

namespace orch::kube_test {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr const char* kPods = "/api/v1/namespaces/default/pods";

TEST_F(kube_client, RequestWithTokenAndTheKubeconfigCa) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  ASSERT_TRUE(client.usable().ok()) << client.usable().error().message;
  auto r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->content_type, "application/json");
  EXPECT_EQ(r->header("CONTENT-type"), "application/json");
  EXPECT_EQ(r->header("x-missing"), "");
  EXPECT_THAT(r->body, HasSubstr("\"kind\":\"PodList\""));
  EXPECT_THAT(r->body, HasSubstr("\"auth\":\"token\""));
}

TEST_F(kube_client, BodyMethodAndContentTypeAreSent) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  auto r = client.request("PATCH", "/echo/x?dryRun=All", R"({"spec":{}})",
                          "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->body, HasSubstr("method=PATCH\n"));
  EXPECT_THAT(r->body, HasSubstr("target=/echo/x?dryRun=All\n"));
  EXPECT_THAT(r->body, HasSubstr("content-type=application/merge-patch+json\n"));
  EXPECT_THAT(r->body, HasSubstr("body={\"spec\":{}}"));

  auto bad = client.request("GET", "no-slash");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid);
  bad = client.request("FROB", "/x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid);
}

TEST_F(kube_client, WrongCaIsRefusedNamingTheServer) {
  auto server = start_server();
  const KubeTarget target =
      load("server: \"" + server->url() + "\", certificate-authority: " + certs_->other_ca_crt,
           "token: good-token");
  KubeClient client(target, "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  const std::string& m = r.error().message;
  EXPECT_THAT(m, HasSubstr("site k8s-a: TLS handshake with " + server->url() + " failed"));
  EXPECT_THAT(m, HasSubstr("certificate verify failed"));
  EXPECT_THAT(m, HasSubstr("kube-test-ca"));  // who did sign it
  EXPECT_THAT(m, HasSubstr("is not signed by the CA given by certificate-authority " +
                           certs_->other_ca_crt));
  EXPECT_THAT(m, HasSubstr(dir_ / "kubeconfig"));
  EXPECT_EQ(server->requests(), 0);  // the token never left
}

TEST_F(kube_client, WithoutACaTheSystemStoreDecides) {
  auto server = start_server();  // signed by the test CA, which no system trusts
  KubeClient client(load("server: \"" + server->url() + "\"", "token: good-token"), "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message, HasSubstr("a CA of the system trust store"));
  EXPECT_THAT(r.error().message, HasSubstr("gives no certificate-authority"));
}

TEST_F(kube_client, HostnameMismatchIsRefused) {
  auto server = start_server(certs_->named_crt, certs_->named_key);  // DNS:kube.internal only
  KubeClient client(token_target(*server), "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  const std::string& m = r.error().message;
  EXPECT_THAT(m, HasSubstr("TLS handshake with " + server->url() + " failed"));
  EXPECT_THAT(m, HasSubstr("not valid for '127.0.0.1'"));
  EXPECT_THAT(m, HasSubstr("DNS:kube.internal"));
  EXPECT_THAT(m, HasSubstr("set tls-server-name"));
  EXPECT_EQ(server->requests(), 0);
}

TEST_F(kube_client, TlsServerNameIsWhatTheCertificateMustName) {
  auto named = start_server(certs_->named_crt, certs_->named_key);
  KubeClient ok_client(load("server: \"" + named->url() + "\", certificate-authority: " +
                                certs_->ca_crt + ", tls-server-name: kube.internal",
                            "token: good-token"),
                       "k8s-a");
  auto r = ok_client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);

  auto server = start_server();  // IP:127.0.0.1, DNS:localhost
  KubeClient bad_client(load("server: \"" + server->url() + "\", certificate-authority: " +
                                 certs_->ca_crt + ", tls-server-name: other.example",
                             "token: good-token"),
                        "k8s-a");
  r = bad_client.request("GET", kPods);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("not valid for 'other.example'"));
  EXPECT_THAT(r.error().message, HasSubstr("DNS:localhost"));
}

TEST_F(kube_client, ServerReachedByHostName) {
  auto server = start_server();
  KubeClient client(load("server: \"https://localhost:" + std::to_string(server->port()) +
                             "\", certificate-authority: " + certs_->ca_crt,
                         "token: good-token"),
                    "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
}

TEST_F(kube_client, InsecureSkipTlsVerifyConnectsAndWarns) {
  auto server = start_server(certs_->named_crt, certs_->named_key);  // wrong name, and no CA
  const KubeTarget target = load(
      "server: \"" + server->url() + "\", insecure-skip-tls-verify: true", "token: good-token");
  ASSERT_EQ(target.warnings.size(), 1u);
  EXPECT_THAT(target.warnings[0], HasSubstr("NOT verified"));
  KubeClient client(target, "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
}

TEST_F(kube_client, ClientCertificateAuthentication) {
  auto server = start_server();
  KubeClient client(
      load("server: \"" + server->url() + "\", certificate-authority: " + certs_->ca_crt,
           "client-certificate: " + certs_->client_crt + ", client-key: " + certs_->client_key),
      "k8s-a");
  ASSERT_TRUE(client.usable().ok()) << client.usable().error().message;
  auto r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->body, HasSubstr("\"auth\":\"cert:kube-admin\""));
}

TEST_F(kube_client, ClientCertificateDataWorksToo) {
  auto server = start_server();
  KubeClient client(load("server: \"" + server->url() +
                             "\", certificate-authority-data: " + base64(read_text(certs_->ca_crt)),
                         "client-certificate-data: " + base64(read_text(certs_->client_crt)) +
                             ", client-key-data: " + base64(read_text(certs_->client_key))),
                    "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(r->body, HasSubstr("\"auth\":\"cert:kube-admin\""));
}

TEST_F(kube_client, ClientCertificateFromAnotherCaIsRefused) {
  auto server = start_server();
  KubeClient client(
      load("server: \"" + server->url() + "\", certificate-authority: " + certs_->ca_crt,
           "client-certificate: " + certs_->rogue_crt + ", client-key: " + certs_->rogue_key),
      "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message, HasSubstr(server->url()));
  EXPECT_THAT(r.error().message, HasSubstr("client certificate"));
}

TEST_F(kube_client, ClientKeyThatDoesNotMatchIsALocalError) {
  auto server = start_server();
  KubeClient client(
      load("server: \"" + server->url() + "\", certificate-authority: " + certs_->ca_crt,
           "client-certificate: " + certs_->client_crt + ", client-key: " + certs_->rogue_key),
      "k8s-a");
  ASSERT_FALSE(client.usable().ok());
  EXPECT_EQ(client.usable().error().kind, ErrorKind::invalid);
  EXPECT_THAT(client.usable().error().message, HasSubstr("site k8s-a"));
  EXPECT_THAT(client.usable().error().message, HasSubstr("does not match"));
  EXPECT_THAT(client.usable().error().message, HasSubstr(certs_->client_crt));
  auto r = client.request("GET", kPods);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_EQ(server->connections(), 0);
}

TEST_F(kube_client, UnauthorizedIsAStatusNotAnError) {
  auto server = start_server();
  KubeClient anonymous(
      load("server: \"" + server->url() + "\", certificate-authority: " + certs_->ca_crt, ""),
      "k8s-a");
  auto r = anonymous.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 401);
  EXPECT_THAT(r->body, HasSubstr("\"reason\":\"Unauthorized\""));

  KubeClient wrong(
      load("server: \"" + server->url() + "\", certificate-authority: " + certs_->ca_crt,
           "token: bad-token"),
      "k8s-a");
  r = wrong.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 401);
}

TEST_F(kube_client, OneConnectionServesManyRequests) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  for (int i = 0; i < 5; ++i) {
    auto r = client.request(i % 2 == 0 ? "GET" : "DELETE", i % 2 == 0 ? kPods : "/echo/del");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(client.connections_opened(), 1u);
  EXPECT_EQ(server->connections(), 1);
  EXPECT_EQ(server->requests(), 5);
}

TEST_F(kube_client, ConcurrentCallersShareTheConnection) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        auto r = client.request("GET", kPods);
        if (r.ok() && r->status == 200) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_EQ(client.connections_opened(), 1u);
}

TEST_F(kube_client, ReconnectsWhenTheServerClosedTheConnection) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  // "Connection: close": the next request opens a new connection.
  auto r = client.request("GET", "/close");
  ASSERT_TRUE(r.ok()) << r.error().message;
  r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(client.connections_opened(), 2u);

  // The server drops the kept-alive connection while the next request is on its way: the GET
  // is retried once on a new connection.
  r = client.request("GET", "/drop-later");
  ASSERT_TRUE(r.ok()) << r.error().message;
  r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(client.connections_opened(), 3u);  // /close's, the dropped one, the retry's

  // The server closed an idle connection some time ago: noticed before sending.
  r = client.request("GET", "/drop-later");
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::this_thread::sleep_for(milliseconds(400));
  r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(client.connections_opened(), 4u);
}

TEST_F(kube_client, ServerRestartIsSurvived) {
  auto server = start_server();
  const int port = server->port();
  KubeClient client(token_target(*server), "k8s-a");
  ASSERT_TRUE(client.request("GET", kPods).ok());
  server.reset();
  auto r = client.request("GET", kPods, "", "application/json", milliseconds(2000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  server = start_server(certs_->server_crt, certs_->server_key, port);
  r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
}

TEST_F(kube_client, ServerDownIsUnreachableQuickly) {
  const int port = closed_port();
  KubeClient client(load("server: \"https://127.0.0.1:" + std::to_string(port) +
                             "\", certificate-authority: " + certs_->ca_crt,
                         "token: good-token"),
                    "k8s-a");
  const auto start = Clock::now();
  auto r = client.request("GET", kPods);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(ms_since(start), 1000);
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message,
              HasSubstr("site k8s-a: cannot connect to https://127.0.0.1:" + std::to_string(port)));
  EXPECT_THAT(r.error().message, HasSubstr("connection refused"));
}

TEST_F(kube_client, SilentServerTimesOut) {
  const SilentListener silent;  // TCP connects, TLS never answers
  KubeClient client(load("server: \"https://127.0.0.1:" + std::to_string(silent.port()) +
                             "\", certificate-authority: " + certs_->ca_crt,
                         "token: good-token"),
                    "k8s-a");
  const auto start = Clock::now();
  auto r = client.request("GET", kPods, "", "application/json", milliseconds(300));
  const double elapsed = ms_since(start);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_GE(elapsed, 250);
  EXPECT_LT(elapsed, 2000);
  EXPECT_THAT(r.error().message, HasSubstr("TLS handshake with https://127.0.0.1:"));
  EXPECT_THAT(r.error().message, HasSubstr("no TLS answer within 300 ms"));
}

TEST_F(kube_client, RequestThatIsNeverAnsweredTimesOut) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  const auto start = Clock::now();
  auto r = client.request("GET", "/hang", "", "application/json", milliseconds(300));
  const double elapsed = ms_since(start);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_GE(elapsed, 250);
  EXPECT_LT(elapsed, 2000);
  EXPECT_THAT(r.error().message,
              HasSubstr(server->url() + " did not answer GET /hang within 300 ms"));
  // The timed-out connection is not reused.
  r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(client.connections_opened(), 2u);
}

TEST_F(kube_client, AQueuedRequestKeepsItsOwnDeadline) {
  auto server = start_server();
  KubeClient client(token_target(*server), "k8s-a");
  std::thread hanging(
      [&] { (void)client.request("GET", "/hang", "", "application/json", milliseconds(1500)); });
  std::this_thread::sleep_for(milliseconds(200));
  const auto start = Clock::now();
  auto r = client.request("GET", kPods, "", "application/json", milliseconds(300));
  const double elapsed = ms_since(start);
  hanging.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_LT(elapsed, 1000);
  EXPECT_THAT(r.error().message, HasSubstr("stayed busy"));
}

TEST_F(kube_client, UnknownHostIsUnreachableInBoundedTime) {
  KubeClient client(load("server: \"https://no-such-host.invalid:6443\", certificate-authority: " +
                             certs_->ca_crt,
                         "token: good-token"),
                    "k8s-a");
  const auto start = Clock::now();
  auto r = client.request("GET", kPods, "", "application/json", milliseconds(1500));
  ASSERT_FALSE(r.ok());
  EXPECT_LT(ms_since(start), 2500);
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message, HasSubstr("cannot resolve no-such-host.invalid"));
}

}  // namespace
}  // namespace orch::kube_test
