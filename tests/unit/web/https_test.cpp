// HttpServer over TLS and http_request over https, on loopback, with certificates the test makes
// (a CA of its own, one unrelated to it, and a certificate issued for another name).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "testkit/fake_kube/test_pki.h"
#include "testkit/server_process.h"
#include "web/http/http_client.h"
#include "web/http/http_server.h"

namespace orch {
namespace {

using ::orch::fake_kube::CertFiles;
using ::orch::fake_kube::make_test_ca;
using ::orch::fake_kube::make_test_cert;
using ::orch::fake_kube::make_test_pki;
using ::orch::fake_kube::TestPki;

// One PKI for the whole suite: openssl takes a moment per key.
class HttpsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new e2e::TempDir();
    pki_ = new TestPki(make_test_pki(dir_->path() + "/pki", "orchestrate-https-test"));
    other_ca_ = new CertFiles(make_test_ca(dir_->path(), "other-ca", "an unrelated CA"));
    elsewhere_ = new CertFiles(make_test_cert(
        dir_->path(), "elsewhere", "elsewhere.example", {pki_->ca_cert, pki_->ca_key},
        "subjectAltName=DNS:elsewhere.example\nextendedKeyUsage=serverAuth\n"));
  }
  static void TearDownTestSuite() {
    delete elsewhere_;
    delete other_ca_;
    delete pki_;
    delete dir_;
  }

  // Starts a server answering "hello" (a 200) with the certificate and key given.
  Result<void> serve(const std::string& cert, const std::string& key) {
    ServerOptions options;
    options.port = 0;
    options.tls_cert_file = cert;
    options.tls_key_file = key;
    server_ = std::make_unique<HttpServer>(options, [](const HttpRequest& request) {
      HttpResponse r;
      r.status = 200;
      r.content_type = "text/plain";
      r.body = "hello " + request.path;
      return r;
    });
    return server_->start();
  }
  std::string url(const std::string& scheme = "https") const {
    return scheme + "://127.0.0.1:" + std::to_string(server_->port());
  }
  static Result<HttpResponse> get(const std::string& base, const std::string& ca_file) {
    RequestOptions o;
    o.timeout_ms = 5000;
    o.ca_file = ca_file;
    return http_request(base, "GET", "/x", "", "application/json", o);
  }

  static e2e::TempDir* dir_;
  static TestPki* pki_;
  static CertFiles* other_ca_;
  static CertFiles* elsewhere_;
  std::unique_ptr<HttpServer> server_;
};

e2e::TempDir* HttpsTest::dir_ = nullptr;
TestPki* HttpsTest::pki_ = nullptr;
CertFiles* HttpsTest::other_ca_ = nullptr;
CertFiles* HttpsTest::elsewhere_ = nullptr;

TEST_F(HttpsTest, AClientThatTrustsTheServersCaGetsItsAnswer) {
  ASSERT_TRUE(serve(pki_->server_cert, pki_->server_key).ok());
  auto r = get(url(), pki_->ca_cert);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello /x");
  // The certificate names localhost too, and the client checks the name it was given.
  auto by_name = get("https://localhost:" + std::to_string(server_->port()), pki_->ca_cert);
  ASSERT_TRUE(by_name.ok()) << by_name.error().message;
  EXPECT_EQ(by_name->status, 200);
}

TEST_F(HttpsTest, ACertificateSignedByAnotherCaIsRefusedNamingTheServer) {
  ASSERT_TRUE(serve(pki_->server_cert, pki_->server_key).ok());
  auto r = get(url(), other_ca_->cert);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_NE(r.error().message.find("the TLS certificate of " + url() + " is not trusted"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("not signed by the CA in " + other_ca_->cert), std::string::npos)
      << r.error().message;
}

TEST_F(HttpsTest, WithoutACaTheSystemStoreIsUsedAndTheMessageSaysToPassOne) {
  ASSERT_TRUE(serve(pki_->server_cert, pki_->server_key).ok());
  auto r = get(url(), "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not signed by a CA of the system trust store: pass --ca FILE"),
            std::string::npos)
      << r.error().message;
}

TEST_F(HttpsTest, ACertificateForAnotherNameIsRefused) {
  ASSERT_TRUE(serve(elsewhere_->cert, elsewhere_->key).ok());
  auto r = get(url(), pki_->ca_cert);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("it is not issued for 127.0.0.1"), std::string::npos)
      << r.error().message;
}

TEST_F(HttpsTest, PlainHttpToTheTlsPortGetsA400SayingToUseHttps) {
  ASSERT_TRUE(serve(pki_->server_cert, pki_->server_key).ok());
  auto r = get(url("http"), "");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("this server speaks HTTPS only"), std::string::npos) << r->body;
  // The server still answers https afterwards.
  auto after = get(url(), pki_->ca_cert);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->status, 200);
}

TEST_F(HttpsTest, HttpsToAPlainServerSaysItDoesNotSpeakTls) {
  ASSERT_TRUE(serve("", "").ok());
  auto r = get(url(), pki_->ca_cert);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("TLS handshake with " + url() + " failed"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("does not speak TLS on this port"), std::string::npos)
      << r.error().message;
}

TEST_F(HttpsTest, AKeyThatIsNotTheCertificatesIsRefusedAtStart) {
  auto r = serve(pki_->server_cert, other_ca_->key);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_NE(r.error().message.find("the TLS private key " + other_ca_->key +
                                   " does not belong to the certificate " + pki_->server_cert),
            std::string::npos)
      << r.error().message;
}

TEST_F(HttpsTest, AMissingOrUnusableFileIsNamedAtStart) {
  auto missing = serve(dir_->path() + "/none.crt", pki_->server_key);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot read the TLS certificate " + dir_->path() +
                                         "/none.crt: No such file or directory"),
            std::string::npos)
      << missing.error().message;
  auto swapped = serve(pki_->server_key, pki_->server_key);
  ASSERT_FALSE(swapped.ok());
  EXPECT_NE(
      swapped.error().message.find("cannot use " + pki_->server_key + " as the TLS certificate"),
      std::string::npos)
      << swapped.error().message;
  auto half = serve(pki_->server_cert, "");
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.error().message.find("both a certificate and a key"), std::string::npos);
}

TEST_F(HttpsTest, AnUnreadableCaFileIsAUsageError) {
  ASSERT_TRUE(serve(pki_->server_cert, pki_->server_key).ok());
  auto r = get(url(), dir_->path() + "/no-ca.pem");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_NE(r.error().message.find("cannot use " + dir_->path() + "/no-ca.pem as the CA"),
            std::string::npos)
      << r.error().message;
}

TEST(ServerUrl, HttpsIsTakenWithPort443ByDefault) {
  auto u = parse_server_url("https://orchestrate.example.com/api");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->host, "orchestrate.example.com");
  EXPECT_EQ(u->port, "443");
  EXPECT_EQ(u->prefix, "/api");
  auto plain = parse_server_url("http://127.0.0.1");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->port, "80");
  auto bad = parse_server_url("ftp://x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("it must start with http:// or https://"), std::string::npos);
}

}  // namespace
}  // namespace orch
