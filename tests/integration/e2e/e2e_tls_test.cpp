// Issue 16's TLS on the real server and CLI: `orchestrate serve` with server.tls and a CA the
// test makes; the CLI works with --ca (or ORCH_CA) and finds the admin token over https; a
// wrong CA, or none, is refused with a message naming the server; plain http to the port is
// told to use https; a certificate that cannot be used stops the start with a reason.
#include <gmock/gmock.h>

#include <cstdlib>

#include "testkit/fake_kube/test_pki.h"
#include "tests/integration/e2e/e2e_fixture.h"
#include "web/http/http_client.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;

std::string tls_yaml(const fake_kube::TestPki& pki) {
  return "server:\n  tls: {cert: " + pki.server_cert + ", key: " + pki.server_key + "}\n";
}

class TlsE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    pki_dir_ = std::make_unique<TempDir>();
    pki_ = fake_kube::make_test_pki(pki_dir_->path() + "/pki", "orchestrate-e2e");
    start_with(tls_yaml(pki_) + local_clusters_yaml(1, 2));
    if (server_) remember_ca(url_, pki_.ca_cert);
  }
  std::unique_ptr<TempDir> pki_dir_;
  fake_kube::TestPki pki_;
};

TEST_F(TlsE2eTest, TheCliSpeaksHttpsWithItsCaAndRefusesAWrongOneNamingTheServer) {
  ASSERT_EQ(url_.rfind("https://127.0.0.1:", 0), 0u) << url_;

  // With --ca: a job submitted and listed, with the admin token found through /healthz.
  const std::string spec = dir_->path() + "/job.yaml";
  write_file(spec, job_yaml("over-tls", "--steps 5 --step-delay-ms 10"));
  ProcessResult submitted = cli({"--ca", pki_.ca_cert, "job", "submit", spec});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  json list = get_json(url_, "/api/v1/jobs");
  ASSERT_TRUE(list.is_object()) << "the test's own https calls trust the CA too";
  ASSERT_EQ(list["jobs"].size(), 1u) << list.dump();
  const std::int64_t id = list["jobs"][0]["id"].get<std::int64_t>();
  EXPECT_EQ(wait_final(id)["state"], "succeeded") << describe_job(url_, id);

  // ORCH_CA does what --ca does.
  ::setenv("ORCH_CA", pki_.ca_cert.c_str(), 1);
  ProcessResult listed = cli({"job", "list"});
  ::unsetenv("ORCH_CA");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_THAT(listed.output, HasSubstr("over-tls"));

  // A CA that did not sign the server's certificate: refused, naming the server.
  const fake_kube::CertFiles other = fake_kube::make_test_ca(pki_dir_->path(), "other", "other CA");
  ProcessResult wrong = cli({"--ca", other.cert, "job", "list"});
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_THAT(wrong.output, HasSubstr("the TLS certificate of " + url_ + " is not trusted"));
  EXPECT_THAT(wrong.output, HasSubstr("not signed by the CA in " + other.cert));
  EXPECT_THAT(wrong.output, ::testing::Not(HasSubstr("over-tls")));

  // No CA: the system store does not know the test's CA, and the message says what to pass.
  ProcessResult none = cli({"job", "list"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(none.output, HasSubstr("the TLS certificate of " + url_ + " is not trusted"));
  EXPECT_THAT(none.output, HasSubstr("pass --ca FILE"));
}

TEST_F(TlsE2eTest, PlainHttpToTheHttpsPortIsToldToUseHttps) {
  const std::string plain = "http://" + url_.substr(std::string("https://").size());
  auto r = http_request(plain, "GET", "/api/v1/jobs");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 400);
  EXPECT_THAT(r->body, HasSubstr("this server speaks HTTPS only"));
  ProcessResult cli_plain = run_process(
      {ORCH_BIN_DIR "/orchestrate", "--server", plain, "job", "list"}, milliseconds(30000));
  EXPECT_NE(cli_plain.exit_code, 0);
  EXPECT_THAT(cli_plain.output, HasSubstr("use an https:// URL"));
}

TEST(TlsServeTest, ACertificateThatCannotBeUsedStopsTheStartWithAReason) {
  TempDir dir;
  const fake_kube::TestPki pki = fake_kube::make_test_pki(dir.path() + "/pki", "orchestrate-e2e");
  const fake_kube::CertFiles other = fake_kube::make_test_ca(dir.path(), "other", "other CA");
  const std::string clusters =
      "clusters:\n  - {name: a, provider: local, nodes: 1" + testkit::local_run_as_yaml() + "}\n";
  auto serve = [&](const std::string& server_yaml) {
    write_file(dir.path() + "/c.yaml", server_yaml + clusters);
    return run_process({ORCH_BIN_DIR "/orchestrate", "serve", "--config", dir.path() + "/c.yaml",
                        "--state", dir.path() + "/s", "--port", "0"},
                       milliseconds(20000));
  };
  ProcessResult mismatch =
      serve("server:\n  tls: {cert: " + pki.server_cert + ", key: " + other.key + "}\n");
  EXPECT_NE(mismatch.exit_code, 0) << mismatch.output;
  EXPECT_THAT(mismatch.output, HasSubstr("the TLS private key " + other.key +
                                         " does not belong to the certificate " + pki.server_cert));
  ProcessResult missing =
      serve("server:\n  tls: {cert: " + dir.path() + "/none.crt, key: " + pki.server_key + "}\n");
  EXPECT_NE(missing.exit_code, 0) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("cannot read the TLS certificate " + dir.path() +
                                        "/none.crt: No such file or directory"));
  ProcessResult half = serve("server:\n  tls: {cert: " + pki.server_cert + "}\n");
  EXPECT_EQ(half.exit_code, 2) << half.output;
  EXPECT_THAT(half.output, HasSubstr("missing required key \"key\" in server.tls"));
}

}  // namespace
}  // namespace orch::e2e
