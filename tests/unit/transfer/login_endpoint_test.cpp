// How the OpenSSH client reaches a login node (adapters/transfer/login_endpoint.h): which
// known_hosts it checks, and the helpers that pin a scanned key. Scanning a real sshd is in
// tests/integration/data/transfer_lab_test.cpp.
#include "adapters/transfer/login_endpoint.h"

#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace orch::transfer {
namespace {

using ::testing::HasSubstr;

ClusterSpec slurm_site() {
  ClusterSpec c;
  c.name = "alpha";
  c.provider = "slurm";
  c.ssh.host = "login.alpha.example";
  c.ssh.port = 2222;
  c.ssh.user = "svc";
  c.ssh.key_file = "/keys/alpha";
  c.ssh.connect_timeout_s = 4.5;
  return c;
}

TEST(TransferLoginEndpoint, UsesTheSpecsKnownHostsStrictly) {
  ClusterSpec c = slurm_site();
  c.ssh.known_hosts = "/keys/known_hosts";
  LoginEndpoints logins("/tmp/orch-transfer-unused");
  auto e = logins.endpoint(c);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "login.alpha.example");
  EXPECT_EQ(e->port, 2222);
  EXPECT_EQ(e->user, "svc");
  EXPECT_EQ(e->key_file, "/keys/alpha");
  EXPECT_EQ(e->known_hosts, "/keys/known_hosts");
  EXPECT_FALSE(e->accept_new);
  EXPECT_EQ(e->connect_timeout_s, 5);  // rounded up
}

TEST(TransferLoginEndpoint, TrustOnFirstUseAcceptsANewKeyOnly) {
  ClusterSpec c = slurm_site();
  c.ssh.trust_on_first_use = true;
  c.ssh.known_hosts = "/keys/known_hosts";
  LoginEndpoints logins("/tmp/orch-transfer-unused");
  EXPECT_TRUE(logins.endpoint(c)->accept_new);
}

TEST(TransferLoginEndpoint, NothingToCheckTheHostKeyAgainstIsRefused) {
  LoginEndpoints logins("/tmp/orch-transfer-unused");
  auto e = logins.endpoint(slurm_site());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().kind, ErrorKind::invalid);
  EXPECT_THAT(e.error().message, HasSubstr("neither ssh.known_hosts nor ssh.host_key"));
}

TEST(TransferLoginEndpoint, HomeIsExpanded) {
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  EXPECT_EQ(home_expanded("~/.ssh/id"), home + "/.ssh/id");
  EXPECT_EQ(home_expanded("/abs/~/x"), "/abs/~/x");
}

TEST(TransferPinnedKey, FingerprintsAsPeoplePasteThem) {
  EXPECT_EQ(normalise_fingerprint(" SHA256:abc= \n"), "SHA256:abc");
  EXPECT_EQ(normalise_fingerprint("abc"), "SHA256:abc");
}

TEST(TransferPinnedKey, KeyscanLinesWithoutComments) {
  const std::string out =
      "# 127.0.0.1:2222 SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\n"
      "[127.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB\n"
      "\n"
      "[127.0.0.1]:2222 ecdsa-sha2-nistp256 AAAAE2VjZHNh\n";
  EXPECT_THAT(keyscan_lines(out),
              ::testing::ElementsAre("[127.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB",
                                     "[127.0.0.1]:2222 ecdsa-sha2-nistp256 AAAAE2VjZHNh"));
}

TEST(TransferPinnedKey, FingerprintFromSshKeygen) {
  EXPECT_EQ(keygen_fingerprint("256 SHA256:I/m0pEHfWeNhDD0V6tK [127.0.0.1]:2222 (ED25519)\n"),
            "SHA256:I/m0pEHfWeNhDD0V6tK");
  EXPECT_FALSE(keygen_fingerprint("tmp is not a public key file."));
}

TEST(TransferPeerEndpoint, PathsAreTheDestinationsOwn) {
  SshEndpoint e = peer_endpoint({"10.0.0.1", 2200, "svc", "~/.ssh/alpha", "/etc/ssh/peers"}, 6);
  EXPECT_EQ(e.host, "10.0.0.1");
  EXPECT_EQ(e.port, 2200);
  EXPECT_EQ(e.key_file, "~/.ssh/alpha");  // expanded by the ssh that runs there, not here
  EXPECT_EQ(e.known_hosts, "/etc/ssh/peers");
  EXPECT_EQ(e.connect_timeout_s, 6);
  EXPECT_FALSE(e.accept_new);
}

}  // namespace
}  // namespace orch::transfer
