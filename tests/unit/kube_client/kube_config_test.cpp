// load_kube_target on kubeconfigs written into a temporary directory. No network, no TLS: the
// PEM texts here only need their BEGIN lines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "adapters/kubernetes/kube_config.h"
#include "tests/unit/kube_client/kube_test_util.h"

namespace orch {
namespace {

using kube_test::base64;
using kube_test::TempDir;
using kube_test::write_text;
using ::testing::HasSubstr;

const std::string kCaPem = "-----BEGIN CERTIFICATE-----\nMIIBdummyCA\n-----END CERTIFICATE-----\n";
const std::string kOtherCaPem =
    "-----BEGIN CERTIFICATE-----\nMIIBotherCA\n-----END CERTIFICATE-----\n";
const std::string kCertPem = "-----BEGIN CERTIFICATE-----\nMIIBclient\n-----END CERTIFICATE-----\n";
const std::string kKeyPem =
    "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIkey\n-----END EC PRIVATE KEY-----\n";

// Two clusters, three users, three contexts; current-context "dev".
std::string typical_config() {
  return R"(apiVersion: v1
kind: Config
preferences: {}
clusters:
- name: dev-cluster
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: )" +
         base64(kCaPem) + R"(
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {foo: bar}
- name: prod-cluster
  cluster:
    server: https://api.prod.example.com/
    certificate-authority: certs/prod-ca.crt
users:
- name: dev-user
  user:
    token: " dev-token "
- name: prod-user
  user:
    client-certificate: certs/client.crt
    client-key: certs/client.key
- name: sso-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: kubelogin
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: team-a
- name: prod
  context:
    cluster: prod-cluster
    user: prod-user
- name: sso
  context:
    cluster: dev-cluster
    user: sso-user
current-context: dev
)";
}

class KubeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    write_text(dir_ / "kube/certs/prod-ca.crt", kCaPem);
    write_text(dir_ / "kube/certs/client.crt", kCertPem);
    write_text(dir_ / "kube/certs/client.key", kKeyPem);
  }
  std::string write_config(const std::string& text, const std::string& name = "kube/config") {
    write_text(dir_ / name, text);
    return dir_ / name;
  }
  TempDir dir_;
};
using kube_config = KubeConfigTest;  // `ctest -R kube` selects the suite

TEST_F(kube_config, CurrentContextWithTokenAndCaData) {
  const std::string path = write_config(typical_config());
  auto t = load_kube_target(path, "", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->kubeconfig, path);
  EXPECT_EQ(t->context, "dev");
  EXPECT_EQ(t->cluster, "dev-cluster");
  EXPECT_EQ(t->user, "dev-user");
  EXPECT_EQ(t->server, "https://10.0.0.1:6443");
  EXPECT_EQ(t->host, "10.0.0.1");
  EXPECT_EQ(t->port, "6443");
  EXPECT_EQ(t->path_prefix, "");
  EXPECT_EQ(t->ca_pem, kCaPem);
  EXPECT_THAT(t->ca_source, HasSubstr("certificate-authority-data of cluster \"dev-cluster\""));
  EXPECT_THAT(t->ca_source, HasSubstr(path));
  EXPECT_EQ(t->token, "dev-token");  // trimmed
  EXPECT_TRUE(t->token_file.empty());
  EXPECT_TRUE(t->client_cert_pem.empty());
  EXPECT_EQ(t->namespace_, "team-a");
  EXPECT_FALSE(t->insecure_skip_tls_verify);
  EXPECT_TRUE(t->warnings.empty());
}

TEST_F(kube_config, NamedContextWithRelativeCertificateFiles) {
  const std::string path = write_config(typical_config());
  auto t = load_kube_target(path, "prod", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->server, "https://api.prod.example.com:443");  // port defaulted, '/' dropped
  EXPECT_EQ(t->ca_pem, kCaPem);
  EXPECT_THAT(t->ca_source, HasSubstr(dir_ / "kube/certs/prod-ca.crt"));
  EXPECT_EQ(t->client_cert_pem, kCertPem);
  EXPECT_EQ(t->client_key_pem, kKeyPem);
  EXPECT_THAT(t->client_cert_source, HasSubstr(dir_ / "kube/certs/client.crt"));
  EXPECT_THAT(t->client_cert_source, HasSubstr(dir_ / "kube/certs/client.key"));
  EXPECT_TRUE(t->token.empty());
  EXPECT_EQ(t->namespace_, "default");
}

TEST_F(kube_config, NamespaceOverrideWins) {
  const std::string path = write_config(typical_config());
  auto t = load_kube_target(path, "dev", "training");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->namespace_, "training");

  auto bad = load_kube_target(path, "dev", "Not_A_Namespace");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid);
  EXPECT_THAT(bad.error().message, HasSubstr("\"Not_A_Namespace\""));
}

TEST_F(kube_config, MissingContextListsTheContextsThatExist) {
  const std::string path = write_config(typical_config());
  auto t = load_kube_target(path, "staging", "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, ErrorKind::invalid);
  EXPECT_THAT(t.error().message, HasSubstr(path));
  EXPECT_THAT(t.error().message, HasSubstr("no context named \"staging\""));
  EXPECT_THAT(t.error().message, HasSubstr("its contexts: dev, prod, sso"));
}

TEST_F(kube_config, CurrentContextThatDoesNotExist) {
  std::string text = typical_config();
  text.replace(text.find("current-context: dev"), 20, "current-context: gone");
  auto t = load_kube_target(write_config(text), "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("no context named \"gone\" (its current-context)"));
  EXPECT_THAT(t.error().message, HasSubstr("its contexts: dev, prod, sso"));
}

TEST_F(kube_config, NoContextAndNoCurrentContext) {
  std::string text = typical_config();
  text.erase(text.find("current-context: dev"));
  auto t = load_kube_target(write_config(text), "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("no current-context"));
  EXPECT_THAT(t.error().message, HasSubstr("its contexts: dev, prod, sso"));
}

TEST_F(kube_config, ContextNamingMissingClusterOrUser) {
  const std::string path = write_config(R"(
clusters:
- name: a
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: no-cluster
  context: {cluster: b, user: u}
- name: no-user
  context: {cluster: a, user: nobody}
)");
  auto t = load_kube_target(path, "no-cluster", "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, ErrorKind::invalid);
  EXPECT_THAT(t.error().message,
              HasSubstr("context \"no-cluster\" names cluster \"b\", which is not defined"));
  EXPECT_THAT(t.error().message, HasSubstr("(clusters: a)"));

  t = load_kube_target(path, "no-user", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message,
              HasSubstr("context \"no-user\" names user \"nobody\", which is not defined"));
  EXPECT_THAT(t.error().message, HasSubstr("(users: u)"));
}

TEST_F(kube_config, ExecPluginIsReadWithItsArgsAndEnv) {
  const std::string path = write_config(R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443"}}]
users:
- name: eks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: bin/aws
      args: [eks, get-token, --cluster-name, prod]
      env: [{name: AWS_PROFILE, value: training}]
      interactiveMode: Never
      provideClusterInfo: true
      installHint: install the AWS CLI
contexts: [{name: c, context: {cluster: a, user: eks}}]
current-context: c
)");
  auto t = load_kube_target(path, "", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_TRUE(t->exec.has_value());
  EXPECT_EQ(t->exec->command, std::string(dir_ / "kube/bin/aws"));  // relative to the kubeconfig
  EXPECT_EQ(t->exec->args,
            (std::vector<std::string>{"eks", "get-token", "--cluster-name", "prod"}));
  ASSERT_EQ(t->exec->env.size(), 1U);
  EXPECT_EQ(t->exec->env[0].first, "AWS_PROFILE");
  EXPECT_EQ(t->exec->env[0].second, "training");
  EXPECT_EQ(t->exec->interactive_mode, "Never");
  EXPECT_TRUE(t->exec->provide_cluster_info);
  EXPECT_EQ(t->exec->install_hint, "install the AWS CLI");
  EXPECT_THAT(t->exec->source, HasSubstr("exec plugin \"bin/aws\" of user \"eks\""));
  EXPECT_TRUE(t->token.empty());
}

TEST_F(kube_config, ExecPluginByNameStaysAPathLookup) {
  const std::string path = write_config(typical_config());
  auto t = load_kube_target(path, "sso", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_TRUE(t->exec.has_value());
  EXPECT_EQ(t->exec->command, "kubelogin");
  EXPECT_EQ(t->exec->interactive_mode, "IfAvailable");  // v1beta1's default
}

TEST_F(kube_config, ExecPluginsThatCannotWorkHereAreRefused) {
  const auto load_user = [&](const std::string& user) {
    return load_kube_target(write_config("clusters: [{name: a, cluster: {server: "
                                         "\"https://127.0.0.1:6443\"}}]\nusers: [{name: u, user: " +
                                         user +
                                         "}]\ncontexts: [{name: c, context: {cluster: a, user: "
                                         "u}}]\ncurrent-context: c\n"),
                            "", "");
  };
  auto always = load_user(
      "{exec: {apiVersion: client.authentication.k8s.io/v1, command: x, interactiveMode: Always}}");
  ASSERT_FALSE(always.ok());
  EXPECT_EQ(always.error().kind, ErrorKind::unsupported);
  EXPECT_THAT(always.error().message, HasSubstr("needs a terminal"));

  auto no_mode = load_user("{exec: {apiVersion: client.authentication.k8s.io/v1, command: x}}");
  ASSERT_FALSE(no_mode.ok());
  EXPECT_THAT(no_mode.error().message, HasSubstr("needs \"interactiveMode\""));

  auto old_api =
      load_user("{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}");
  ASSERT_FALSE(old_api.ok());
  EXPECT_THAT(old_api.error().message, HasSubstr("v1alpha1\" is not supported"));

  auto both =
      load_user("{token: t, exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: x}}");
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.error().message, HasSubstr("both a token and an exec plugin"));

  auto no_command = load_user("{exec: {apiVersion: client.authentication.k8s.io/v1beta1}}");
  ASSERT_FALSE(no_command.ok());
  EXPECT_THAT(no_command.error().message, HasSubstr("exec has no \"command\""));
}

TEST_F(kube_config, BasicAuthIsRefused) {
  const std::string path = write_config(R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: admin, user: {username: admin, password: secret}}]
contexts: [{name: c, context: {cluster: a, user: admin}}]
current-context: c
)");
  auto t = load_kube_target(path, "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, ErrorKind::unsupported);
  EXPECT_THAT(t.error().message, HasSubstr("user \"admin\""));
  EXPECT_THAT(t.error().message, HasSubstr("username/password"));
}

TEST_F(kube_config, CaDataWinsOverCaFileWithAWarning) {
  write_text(dir_ / "kube/other-ca.crt", kOtherCaPem);
  const std::string path = write_config(R"(
clusters:
- name: a
  cluster:
    server: "https://127.0.0.1:6443"
    certificate-authority: other-ca.crt
    certificate-authority-data: )" + base64(kCaPem) +
                                        R"(
contexts: [{name: c, context: {cluster: a}}]
current-context: c
)");
  auto t = load_kube_target(path, "", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->ca_pem, kCaPem);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_THAT(t->warnings[0], HasSubstr("using certificate-authority-data"));
  EXPECT_TRUE(t->user.empty());  // a context without a user: anonymous
  EXPECT_TRUE(t->token.empty());
}

TEST_F(kube_config, CaFileThatIsMissingOrNotPem) {
  const std::string text = R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.pem}}]
contexts: [{name: c, context: {cluster: a}}]
current-context: c
)";
  const std::string path = write_config(text);
  auto t = load_kube_target(path, "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, ErrorKind::invalid);
  EXPECT_THAT(t.error().message, HasSubstr("cannot read " + (dir_ / "kube/ca.pem")));
  EXPECT_THAT(t.error().message, HasSubstr("No such file"));

  write_text(dir_ / "kube/ca.pem", "not a certificate");
  t = load_kube_target(path, "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("is not a PEM certificate"));
}

TEST_F(kube_config, BadBase64IsNamed) {
  const std::string path = write_config(R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: "%%%"}}]
contexts: [{name: c, context: {cluster: a}}]
current-context: c
)");
  auto t = load_kube_target(path, "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message,
              HasSubstr("certificate-authority-data of cluster \"a\" is not valid base64"));
}

TEST_F(kube_config, TokenFileRelativeToTheKubeconfig) {
  write_text(dir_ / "kube/secrets/token", "  file-token\n");
  const std::string path = write_config(R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {tokenFile: secrets/token}}]
contexts: [{name: c, context: {cluster: a, user: u}}]
current-context: c
)");
  auto t = load_kube_target(path, "", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->token, "file-token");
  EXPECT_EQ(t->token_file, dir_ / "kube/secrets/token");
  EXPECT_TRUE(t->ca_pem.empty());  // the system trust store

  std::filesystem::remove(dir_ / "kube/secrets/token");
  t = load_kube_target(path, "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("tokenFile of user \"u\""));
  EXPECT_THAT(t.error().message, HasSubstr(dir_ / "kube/secrets/token"));
}

TEST_F(kube_config, TokenWinsOverTokenFile) {
  const std::string path = write_config(R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: inline, tokenFile: does-not-exist}}]
contexts: [{name: c, context: {cluster: a, user: u}}]
current-context: c
)");
  auto t = load_kube_target(path, "", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->token, "inline");
  EXPECT_TRUE(t->token_file.empty());
}

TEST_F(kube_config, HomeIsExpanded) {
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home != nullptr ? old_home : "";
  ::setenv("HOME", dir_.path().c_str(), 1);
  write_text(dir_ / "pki/ca.crt", kCaPem);
  write_config(R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443", certificate-authority: ~/pki/ca.crt}}]
contexts: [{name: c, context: {cluster: a}}]
current-context: c
)",
               ".kube/config");
  auto t = load_kube_target("~/.kube/config", "", "");
  if (old_home != nullptr) {
    ::setenv("HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("HOME");
  }
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->kubeconfig, dir_ / ".kube/config");
  EXPECT_EQ(t->ca_pem, kCaPem);
}

TEST_F(kube_config, ClientCertificateDataAndKeyMustComeTogether) {
  const std::string both =
      write_config(R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {client-certificate-data: )" +
                   base64(kCertPem) + ", client-key-data: " + base64(kKeyPem) + R"(}}]
contexts: [{name: c, context: {cluster: a, user: u}}]
current-context: c
)");
  auto t = load_kube_target(both, "", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->client_cert_pem, kCertPem);
  EXPECT_EQ(t->client_key_pem, kKeyPem);

  const std::string only_cert = write_config(R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {client-certificate: certs/client.crt}}]
contexts: [{name: c, context: {cluster: a, user: u}}]
current-context: c
)",
                                             "kube/only-cert");
  t = load_kube_target(only_cert, "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("gives a client certificate but no key"));
}

TEST_F(kube_config, InsecureSkipTlsVerifyWarns) {
  const std::string path = write_config(R"(
clusters: [{name: a, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
contexts: [{name: c, context: {cluster: a}}]
current-context: c
)");
  auto t = load_kube_target(path, "", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->insecure_skip_tls_verify);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_THAT(t->warnings[0], HasSubstr("insecure-skip-tls-verify"));
  EXPECT_THAT(t->warnings[0], HasSubstr("NOT verified"));
  EXPECT_THAT(t->warnings[0], HasSubstr("https://127.0.0.1:6443"));

  const std::string both = write_config(R"(
clusters:
- name: a
  cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true, certificate-authority-data: )" +
                                            base64(kCaPem) + R"(}
contexts: [{name: c, context: {cluster: a}}]
current-context: c
)",
                                        "kube/both");
  t = load_kube_target(both, "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("insecure-skip-tls-verify together with"));
}

TEST_F(kube_config, TlsServerNameAndPathPrefix) {
  const std::string path = write_config(R"(
clusters: [{name: a, cluster: {server: "https://[::1]:8443/k8s/clusters/c-1/", tls-server-name: kube.internal}}]
contexts: [{name: c, context: {cluster: a}}]
current-context: c
)");
  auto t = load_kube_target(path, "", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->host, "::1");
  EXPECT_EQ(t->port, "8443");
  EXPECT_EQ(t->path_prefix, "/k8s/clusters/c-1");
  EXPECT_EQ(t->server, "https://[::1]:8443/k8s/clusters/c-1");
  EXPECT_EQ(t->tls_server_name, "kube.internal");
}

TEST(kube_config_server_url, Shapes) {
  auto url = parse_kube_server_url("https://example.com");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->normalised, "https://example.com:443");
  EXPECT_FALSE(parse_kube_server_url("http://127.0.0.1:8080").ok());
  EXPECT_FALSE(parse_kube_server_url("127.0.0.1:6443").ok());
  EXPECT_FALSE(parse_kube_server_url("https://:6443").ok());
  EXPECT_FALSE(parse_kube_server_url("https://h:70000").ok());
  EXPECT_FALSE(parse_kube_server_url("https://h:6443/x?y=1").ok());
  EXPECT_THAT(parse_kube_server_url("http://h").error().message, HasSubstr("plain http"));
}

TEST_F(kube_config, UnreadableOrMalformedFile) {
  auto t = load_kube_target(dir_ / "nope", "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, ErrorKind::invalid);
  EXPECT_THAT(t.error().message, HasSubstr(dir_ / "nope"));

  t = load_kube_target(write_config("clusters: [\n  - {name: a\n"), "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("not valid YAML"));

  t = load_kube_target(write_config("- just\n- a list\n"), "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("expected a map"));
}

TEST_F(kube_config, ServerMissingOrPlainHttp) {
  auto t = load_kube_target(write_config(R"(
clusters: [{name: a, cluster: {server: "http://127.0.0.1:8080"}}]
contexts: [{name: c, context: {cluster: a}}]
current-context: c
)"),
                            "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("cluster \"a\""));
  EXPECT_THAT(t.error().message, HasSubstr("plain http"));

  t = load_kube_target(write_config(R"(
clusters: [{name: a, cluster: {}}]
contexts: [{name: c, context: {cluster: a}}]
current-context: c
)"),
                       "", "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("cluster \"a\" has no \"server\""));
}

}  // namespace
}  // namespace orch
