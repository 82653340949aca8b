#include "testkit/fake_kube/sandbox.h"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>

#include "testkit/fake_kube/pod_volumes.h"

namespace orch::fake_kube {

namespace fs = std::filesystem;

FakeKubeSandbox::FakeKubeSandbox(const std::string& prefix, std::vector<NodeConfig> nodes) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error("cannot make a temporary directory " + tmpl);
  }
  dir_ = tmpl;
  pki_ = make_test_pki(dir_ + "/pki");
  token_ = random_token();
  FakeKubeOptions o;
  o.cert_file = pki_.server_cert;
  o.key_file = pki_.server_key;
  o.token = token_;
  o.cluster.state_dir = dir_ + "/fake";
  o.cluster.nodes = std::move(nodes);
  server_ = std::make_unique<FakeKubeServer>(o);
  server_->start();
  kubeconfig_ = dir_ + "/kubeconfig";
  write_kubeconfig(kubeconfig_, {server_->url(), pki_.ca_cert, token_});
}

FakeKubeSandbox::~FakeKubeSandbox() {
  if (server_) server_->stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string FakeKubeSandbox::claim(const std::string& name, const std::string& ns) const {
  return claim_dir(dir_ + "/fake", ns, name);
}

KubeReply FakeKubeSandbox::api(const std::string& method, const std::string& target,
                               const std::string& body) const {
  return kube_request({"127.0.0.1", server_->port(), pki_.ca_cert, token_}, method, target, body);
}

}  // namespace orch::fake_kube
