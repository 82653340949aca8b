// Exec credential plugins (exec_credential.h) through KubeClient against the TLS test server:
// the plugin is a shell script in the test's directory that prints the ExecCredential the test
// left in credential.json and counts its runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <thread>

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/exec_credential.h"
#include "tests/unit/kube_client/kube_client_fixture.h"

namespace orch::kube_test {
namespace {

using ::testing::HasSubstr;

constexpr const char* kPods = "/api/v1/namespaces/default/pods";

std::string rfc3339(std::chrono::system_clock::time_point at) {
  const auto t = std::chrono::system_clock::to_time_t(at);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

class ExecPluginTest : public KubeClientTest {
 protected:
  // The plugin: records its environment, counts its runs, prints credential.json.
  void write_plugin(const std::string& body = "") {
    write_text(dir_ / "plugin.sh",
               "#!/bin/sh\necho run >> '" + (dir_ / "runs") +
                   "'\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > '" + (dir_ / "exec-info") +
                   "'\nprintf '%s' \"$PLUGIN_PROFILE\" > '" + (dir_ / "profile") + "'\n" + body +
                   "cat '" + (dir_ / "credential.json") + "'\n");
    ::chmod((dir_ / "plugin.sh").c_str(), 0755);
  }
  void credential(const std::string& status_fields) {
    write_text(
        dir_ / "credential.json",
        R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{)" +
            status_fields + "}}");
  }
  int runs() {
    const std::string text = read_text(dir_ / "runs");
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }
  KubeTarget exec_target(const TlsTestServer& server, const std::string& command = "") {
    return load("server: \"" + server.url() + "\", certificate-authority: " + certs_->ca_crt,
                "exec: {apiVersion: client.authentication.k8s.io/v1, command: \"" +
                    (command.empty() ? dir_ / "plugin.sh" : command) +
                    "\", interactiveMode: Never, provideClusterInfo: true, installHint: \"install "
                    "the plugin\", env: [{name: PLUGIN_PROFILE, value: training}]}");
  }
};

// Named kube_* so that `ctest -R kube` selects the suite.
using kube_exec = ExecPluginTest;

TEST_F(kube_exec, ATokenFromThePluginIsUsedAndKeptUntilRefused) {
  auto server = start_server();
  write_plugin();
  credential(R"("token":"good-token")");
  KubeClient client(exec_target(*server), "k8s-a");
  for (int i = 0; i < 3; ++i) {
    auto r = client.request("GET", kPods);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, 200);
    EXPECT_THAT(r->body, HasSubstr("\"auth\":\"token\""));
  }
  EXPECT_EQ(runs(), 1);  // no expiry: cached
  EXPECT_EQ(read_text(dir_ / "profile"), "training");
  const std::string info = read_text(dir_ / "exec-info");
  EXPECT_THAT(info, HasSubstr("\"kind\":\"ExecCredential\""));
  EXPECT_THAT(info, HasSubstr("\"interactive\":false"));
  EXPECT_THAT(info, HasSubstr("\"server\":\"" + server->url() + "\""));
  EXPECT_THAT(info,
              HasSubstr("\"certificate-authority-data\":\"" + base64(read_text(certs_->ca_crt))));
}

TEST_F(kube_exec, AnExpiredTokenIsFetchedAgain) {
  auto server = start_server();
  write_plugin();
  // RFC 3339 in whole seconds: a token valid 2 to 3 seconds from now.
  const auto expires = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now() +
                                                                std::chrono::seconds(3));
  credential(R"("token":"good-token","expirationTimestamp":")" + rfc3339(expires) + "\"");
  KubeClient client(exec_target(*server), "k8s-a");
  ASSERT_TRUE(client.request("GET", kPods).ok());
  ASSERT_TRUE(client.request("GET", kPods).ok());
  EXPECT_EQ(runs(), 1);
  std::this_thread::sleep_until(expires + std::chrono::milliseconds(200));
  credential(R"("token":"good-token","expirationTimestamp":")" +
             rfc3339(std::chrono::system_clock::now() + std::chrono::hours(1)) + "\"");
  auto r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(runs(), 2);
}

TEST_F(kube_exec, A401RunsThePluginAgainAndRetriesOnce) {
  auto server = start_server();
  write_plugin();
  credential(R"("token":"revoked-token")");
  KubeClient client(exec_target(*server), "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 401);  // both tries were refused
  EXPECT_EQ(runs(), 2);

  credential(R"("token":"good-token")");
  r = client.request("POST", "/echo/create", "{}");  // even a POST: a 401 did nothing
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(runs(), 3);
}

TEST_F(kube_exec, AClientCertificateFromThePluginIsPresented) {
  auto server = start_server();
  write_plugin();
  credential("\"clientCertificateData\":" + nlohmann::json(read_text(certs_->client_crt)).dump() +
             ",\"clientKeyData\":" + nlohmann::json(read_text(certs_->client_key)).dump());
  KubeClient client(exec_target(*server), "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->body, HasSubstr("\"auth\":\"cert:kube-admin\""));
}

TEST_F(kube_exec, AFailingPluginSaysWhichAndWhy) {
  auto server = start_server();
  write_plugin("echo 'error: not logged in; run gcloud auth login' >&2\nexit 3\n");
  credential(R"("token":"good-token")");
  KubeClient client(exec_target(*server), "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message, HasSubstr("site k8s-a"));
  EXPECT_THAT(r.error().message, HasSubstr("plugin.sh"));
  EXPECT_THAT(r.error().message, HasSubstr("user \"me\""));
  EXPECT_THAT(r.error().message, HasSubstr("exit status 3"));
  EXPECT_THAT(r.error().message, HasSubstr("error: not logged in; run gcloud auth login"));
  EXPECT_EQ(server->requests(), 0);

  auto w = client.watch("/watch/split", [](const std::string&) { return true; });
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.error().message, HasSubstr("exit status 3"));
}

TEST_F(kube_exec, AMissingPluginShowsItsInstallHint) {
  auto server = start_server();
  KubeClient client(exec_target(*server, dir_ / "no-such-plugin"), "k8s-a");
  auto r = client.request("GET", kPods);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("cannot be started"));
  EXPECT_THAT(r.error().message, HasSubstr("install the plugin"));
}

TEST_F(kube_exec, OutputThatIsNotACredentialIsNamed) {
  KubeExecPlugin plugin;
  plugin.api_version = "client.authentication.k8s.io/v1";
  plugin.source = "exec plugin \"p\"";
  const auto fails_with = [&](const std::string& out, const std::string& why) {
    auto c = parse_exec_credential(out, plugin);
    ASSERT_FALSE(c.ok()) << out;
    EXPECT_THAT(c.error().message, HasSubstr("exec plugin \"p\" printed no usable ExecCredential"));
    EXPECT_THAT(c.error().message, HasSubstr(why)) << out;
  };
  fails_with("token: x", "not a JSON object");
  fails_with(
      R"({"kind":"Pod","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t"}})",
      "kind is not ExecCredential");
  fails_with(
      R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"t"}})",
      "is not the kubeconfig's client.authentication.k8s.io/v1");
  fails_with(R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1"})",
             "no status");
  fails_with(
      R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{}})",
      "neither a token nor clientCertificateData");
  fails_with(
      R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"clientCertificateData":"x"}})",
      "without the other");
  fails_with(
      R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t","expirationTimestamp":"soon"}})",
      "expirationTimestamp \"soon\"");
  auto ok = parse_exec_credential(
      R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t","expirationTimestamp":"2026-12-05T12:00:00Z"}})",
      plugin);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->token, "t");
  EXPECT_EQ(ok->expires_ms, 1796472000000);
}

}  // namespace
}  // namespace orch::kube_test
