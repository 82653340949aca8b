#pragma once
// A fake API server started in this process for one test (or benchmark): a temporary directory
// of its own, the test PKI, a bearer token, the server with the nodes asked for, and a
// kubeconfig that names it; all stopped and removed with the sandbox. What the Kubernetes
// adapter's integration tests share (tests/integration/kube).

#include <memory>
#include <string>
#include <vector>

#include "testkit/fake_kube/cluster.h"
#include "testkit/fake_kube/fake_kube_server.h"
#include "testkit/fake_kube/kube_test_client.h"
#include "testkit/fake_kube/test_pki.h"

namespace orch::fake_kube {

class FakeKubeSandbox {
 public:
  // `prefix` names the temporary directory ("kube-site": /tmp/kube-site-XXXXXX). Throws
  // std::runtime_error when the directory, the PKI or the server cannot be made.
  explicit FakeKubeSandbox(const std::string& prefix,
                           std::vector<NodeConfig> nodes = uniform_nodes(2, 8));
  ~FakeKubeSandbox();  // stops the server, removes the directory
  FakeKubeSandbox(const FakeKubeSandbox&) = delete;
  FakeKubeSandbox& operator=(const FakeKubeSandbox&) = delete;

  // The temporary directory: the server's state is in <dir>/fake; the rest is the test's.
  const std::string& dir() const { return dir_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const TestPki& pki() const { return pki_; }
  const std::string& token() const { return token_; }
  FakeKubeServer& server() { return *server_; }
  // The directory a persistentVolumeClaim volume of that claim is (pod_volumes.h).
  std::string claim(const std::string& name, const std::string& ns = "default") const;
  // A request straight to the server (hooks, objects), with the token.
  KubeReply api(const std::string& method, const std::string& target,
                const std::string& body = "") const;

 private:
  std::string dir_;
  TestPki pki_;
  std::string token_;
  std::string kubeconfig_;
  std::unique_ptr<FakeKubeServer> server_;
};

}  // namespace orch::fake_kube
