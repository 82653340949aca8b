#pragma once
// Certificates and kubeconfigs for tests of the fake API server (and of clients pointed at it),
// made with the `openssl` command: a CA of the test's own, a server certificate it signs for
// IP:127.0.0.1 and DNS:localhost, and a kubeconfig with one cluster, user and context.

#include <string>

namespace orch::fake_kube {

struct TestPki {
  std::string dir;
  std::string ca_cert;  // dir/ca.crt
  std::string ca_key;
  std::string server_cert;  // dir/server.crt, signed by ca.crt
  std::string server_key;
};

// Creates dir (if needed) and the files in it (EC P-256 keys, valid for 2 days). `name` tells
// two PKIs apart in the subjects (e.g. a second, unrelated CA for a wrong-CA test). Throws
// std::runtime_error with openssl's output when a step fails.
TestPki make_test_pki(const std::string& dir, const std::string& name = "fake-kube");

// The steps make_test_pki is made of, for tests that need other certificates (client
// certificates, a second CA, other SANs). Both write dir/STEM.crt and dir/STEM.key (EC P-256)
// and throw std::runtime_error with openssl's output when a step fails.
struct CertFiles {
  std::string cert;  // dir/STEM.crt
  std::string key;   // dir/STEM.key
};

// A self-signed CA (CN=cn, basicConstraints CA:TRUE, keyUsage keyCertSign,cRLSign).
CertFiles make_test_ca(const std::string& dir, const std::string& stem, const std::string& cn,
                       int days = 2);

// A certificate for CN=cn signed by `ca`; `extensions` is an openssl extfile's text, one
// extension a line (e.g. "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n").
CertFiles make_test_cert(const std::string& dir, const std::string& stem, const std::string& cn,
                         const CertFiles& ca, const std::string& extensions, int days = 2);

struct KubeconfigOptions {
  std::string server;   // https://127.0.0.1:PORT
  std::string ca_file;  // embedded as certificate-authority-data
  std::string token;
  std::string ns = "default";
  std::string cluster = "fake";
  std::string user = "fake-user";
  std::string context = "fake";
  bool insecure_skip_tls_verify = false;  // instead of the CA data
};

// Writes a kubeconfig with one cluster, one user (bearer token), one context (current).
void write_kubeconfig(const std::string& path, const KubeconfigOptions& options);

// 32 random hex digits.
std::string random_token();

std::string base64(const std::string& bytes);

}  // namespace orch::fake_kube
