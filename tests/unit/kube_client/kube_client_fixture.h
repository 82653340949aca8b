#pragma once
// The fixture of the KubeClient tests (kube_client_test.cpp, kube_watch_test.cpp): the openssl
// generated certificates, a TLS test server per test, and kubeconfigs written for it.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/kube_config.h"
#include "tests/unit/kube_client/kube_test_util.h"
#include "tests/unit/kube_client/tls_test_server.h"

namespace orch::kube_test {

class KubeClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    certs_ = &certs(&error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_FALSE(dir_.path().empty());
  }

  // A server with `crt`/`key` that accepts the token "good-token" or a client certificate
  // signed by the test CA.
  std::unique_ptr<TlsTestServer> start_server(const std::string& crt, const std::string& key,
                                              int port = 0) {
    TlsTestServer::Options options;
    options.cert_file = crt;
    options.key_file = key;
    options.client_ca_file = certs_->ca_crt;
    options.port = port;
    return std::make_unique<TlsTestServer>(options);
  }
  std::unique_ptr<TlsTestServer> start_server() {
    return start_server(certs_->server_crt, certs_->server_key);
  }

  // Writes a kubeconfig with one cluster (`cluster_fields`: YAML flow-map entries such as
  // `server: "https://...", certificate-authority: /x/ca.crt`) and one user, and loads it.
  KubeTarget load(const std::string& cluster_fields, const std::string& user_fields) {
    const std::string text = "clusters: [{name: k8s, cluster: {" + cluster_fields +
                             "}}]\nusers: [{name: me, user: {" + user_fields +
                             "}}]\ncontexts: [{name: ctx, context: {cluster: k8s, user: me}}]\n"
                             "current-context: ctx\n";
    write_text(dir_ / "kubeconfig", text);
    auto target = load_kube_target(dir_ / "kubeconfig", "", "");
    EXPECT_TRUE(target.ok()) << target.error().message;
    return target.ok() ? std::move(target).value() : KubeTarget{};
  }

  // The usual target: the server's URL, the test CA, the good token.
  KubeTarget token_target(const TlsTestServer& server) {
    return load("server: \"" + server.url() + "\", certificate-authority: " + certs_->ca_crt,
                "token: good-token");
  }

  const Certs* certs_ = nullptr;
  TempDir dir_;
};

// The suite's name is the binary's, so that `ctest -R kube` selects these tests. Both test files
// use this one fixture type: gtest requires one fixture class per suite.
using kube_client = KubeClientTest;

}  // namespace orch::kube_test
