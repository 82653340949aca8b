// SshSession against a real OpenSSH server on 127.0.0.1 (testkit/test_sshd.h): every
// host-key path (pinned fingerprint, known_hosts, trust on first use), unreachable and silent
// servers with the back-off, and key authentication. No mocks.
#include <gmock/gmock.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "adapters/ssh/ssh_session.h"
#include "tests/unit/ssh/ssh_test_util.h"

namespace orch {
namespace {

using ssh_test::Clock;
using ssh_test::ms_since;
using ssh_test::read_local;
using ssh_test::ssh_session;
using std::chrono::milliseconds;
using test::TestSshd;
using ::testing::HasSubstr;

// ---- host keys ---------------------------------------------------------------------------------

TEST_F(ssh_session, WrongPinnedFingerprintIsRefused) {
  const std::string other = sshd_.make_key("other", "", false);
  const std::string other_fp = TestSshd::fingerprint_of(other + ".pub");
  SshSpec spec = sshd_.spec();
  spec.host_key = other_fp;
  SshSession ssh("alpha", spec);
  auto r = ssh.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  const std::string& m = r.error().message;
  EXPECT_THAT(m, HasSubstr("site alpha: "));
  EXPECT_THAT(m, HasSubstr("changed"));
  EXPECT_THAT(m, HasSubstr("expected " + other_fp));
  EXPECT_THAT(m, HasSubstr("offered " + sshd_.host_fingerprint()));
  EXPECT_THAT(m, HasSubstr("ssh.host_key"));
  EXPECT_EQ(ssh.server_fingerprint(), "");
  std::cout << "[message] " << m << "\n";
}

TEST_F(ssh_session, KnownHostsWithTheRightKeyIsAccepted) {
  const std::string known = sshd_.dir() + "/known_hosts";
  std::ofstream(known) << "# comment\n"
                       << "otherhost ssh-ed25519 "
                          "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
                       << "[127.0.0.1]:" << sshd_.port() << " " << sshd_.host_public_key() << "\n";
  SshSpec spec = sshd_.spec();
  spec.host_key.clear();
  spec.known_hosts = known;
  SshSession ssh("alpha", spec);
  auto r = ssh.exec("echo ok", milliseconds(5000));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->out, "ok\n");
  EXPECT_EQ(ssh.server_fingerprint(), sshd_.host_fingerprint());
}

TEST_F(ssh_session, KnownHostsWithADifferentKeyIsAChangedKey) {
  sshd_.make_key("impostor", "", false);
  const std::string impostor_fp = TestSshd::fingerprint_of(sshd_.dir() + "/impostor.pub");
  const std::string known = sshd_.dir() + "/known_hosts";
  std::ofstream(known) << "[127.0.0.1]:" << sshd_.port() << " " << sshd_.public_key_line("impostor")
                       << "\n";
  SshSpec spec = sshd_.spec();
  spec.host_key.clear();
  spec.known_hosts = known;
  spec.trust_on_first_use = true;  // a changed key is refused even so
  SshSession ssh("alpha", spec);
  auto r = ssh.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  const std::string& m = r.error().message;
  EXPECT_THAT(m, HasSubstr("site alpha: "));
  EXPECT_THAT(m, HasSubstr("changed"));
  EXPECT_THAT(m, HasSubstr(known + " line 1 records " + impostor_fp));
  EXPECT_THAT(m, HasSubstr("offered " + sshd_.host_fingerprint()));
  std::cout << "[message] " << m << "\n";
}

TEST_F(ssh_session, UnknownHostWithoutTrustOnFirstUseIsRefused) {
  SshSpec spec = sshd_.spec();
  spec.host_key.clear();
  SshSession no_file("alpha", spec);
  auto r = no_file.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message, HasSubstr("unknown"));
  EXPECT_THAT(r.error().message, HasSubstr(sshd_.host_fingerprint()));
  EXPECT_THAT(r.error().message, HasSubstr("trust_on_first_use"));

  // A known_hosts file that knows other hosts only; ~/.ssh/known_hosts is never consulted.
  spec.known_hosts = sshd_.dir() + "/known_hosts";
  std::ofstream(spec.known_hosts) << "otherhost " << sshd_.host_public_key() << "\n";
  SshSession other("alpha", spec);
  r = other.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("unknown"));
}

TEST_F(ssh_session, TrustOnFirstUseRecordsTheKeyInKnownHosts) {
  SshSpec spec = sshd_.spec();
  spec.host_key.clear();
  spec.known_hosts = sshd_.dir() + "/kh/known_hosts";  // neither file nor directory exists yet
  spec.trust_on_first_use = true;
  {
    SshSession ssh("alpha", spec);
    auto r = ssh.exec("true", milliseconds(5000));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(ssh.server_fingerprint(), sshd_.host_fingerprint());
  }
  const std::string recorded = read_local(spec.known_hosts);
  EXPECT_THAT(recorded, HasSubstr("[127.0.0.1]:" + std::to_string(sshd_.port()) + " ssh-ed25519 "));
  // Now known: accepted without trust on first use.
  spec.trust_on_first_use = false;
  SshSession strict("alpha", spec);
  ASSERT_TRUE(strict.exec("true", milliseconds(5000)).ok());
  // And after the server's key changes, refused as changed, naming the file's line.
  const std::string old_fp = sshd_.host_fingerprint();
  sshd_.change_host_key();
  strict.disconnect();
  auto r = strict.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("changed"));
  EXPECT_THAT(r.error().message, HasSubstr("line 1 records " + old_fp));
  EXPECT_THAT(r.error().message, HasSubstr("offered " + sshd_.host_fingerprint()));
}

TEST_F(ssh_session, KeyTrustedOnFirstUseIsPinnedForTheSession) {
  SshSpec spec = sshd_.spec();
  spec.host_key.clear();
  spec.trust_on_first_use = true;
  SshSession ssh("alpha", spec);
  ASSERT_TRUE(ssh.exec("true", milliseconds(5000)).ok());
  const std::string old_fp = ssh.server_fingerprint();
  EXPECT_EQ(old_fp, sshd_.host_fingerprint());
  sshd_.change_host_key();  // restarts the server: the connection is gone
  auto r = ssh.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  const std::string& m = r.error().message;
  EXPECT_THAT(m, HasSubstr("site alpha: "));
  EXPECT_THAT(m, HasSubstr("changed"));
  EXPECT_THAT(m, HasSubstr(old_fp));
  EXPECT_THAT(m, HasSubstr(sshd_.host_fingerprint()));
  std::cout << "[message] " << m << "\n";
}

// ---- unreachable sites and back-off ------------------------------------------------------------

TEST_F(ssh_session, StoppedServerIsUnreachableFastAndBacksOff) {
  SshSession ssh("alpha", sshd_.spec());
  ASSERT_TRUE(ssh.exec("true", milliseconds(5000)).ok());
  sshd_.stop();

  auto start = Clock::now();
  auto r = ssh.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message, HasSubstr("site alpha: "));
  EXPECT_THAT(r.error().message, HasSubstr("refused"));
  EXPECT_LT(ms_since(start), 1000.0);
  const auto attempts = ssh.connect_attempts();

  // Within the back-off window: fails at once, without trying to connect.
  start = Clock::now();
  auto again = ssh.exec("true", milliseconds(5000));
  ASSERT_FALSE(again.ok());
  EXPECT_LT(ms_since(start), 50.0);
  EXPECT_EQ(ssh.connect_attempts(), attempts);
  EXPECT_EQ(again.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(again.error().message, HasSubstr("refused"));
  EXPECT_THAT(again.error().message, HasSubstr("not retrying for another"));
  auto read = ssh.read_file(sshd_.dir() + "/sshd_config", 0, 10);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(ssh.connect_attempts(), attempts);

  // After the window it tries again (and the window doubles).
  std::this_thread::sleep_for(milliseconds(600));
  auto third = ssh.exec("true", milliseconds(5000));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(ssh.connect_attempts(), attempts + 1);
  EXPECT_THAT(third.error().message, HasSubstr("1.0 s"));

  // Once more after that window: the back-off is now 2 s.
  std::this_thread::sleep_for(milliseconds(1100));
  auto fourth = ssh.exec("true", milliseconds(5000));
  ASSERT_FALSE(fourth.ok());
  const auto fourth_failed = Clock::now();
  EXPECT_THAT(fourth.error().message, HasSubstr("2.0 s"));

  // Back up within that window: the next call's handshake finds the port answering again and
  // reconnects at once instead of waiting the window out.
  sshd_.start();
  auto back = ssh.exec("echo up", milliseconds(5000));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->out, "up\n");
  EXPECT_LT(ms_since(fourth_failed), 2000.0) << "sshd took longer than the window to start";
  EXPECT_EQ(ssh.connect_attempts(), attempts + 3);
}

TEST_F(ssh_session, DisconnectForgetsTheBackOff) {
  SshSession ssh("alpha", sshd_.spec());
  sshd_.stop();
  ASSERT_FALSE(ssh.exec("true", milliseconds(5000)).ok());
  ssh.disconnect();
  sshd_.start();
  auto back = ssh.exec("echo up", milliseconds(5000));
  ASSERT_TRUE(back.ok()) << back.error().message;
}

TEST_F(ssh_session, ALoginNodeThatAnswersButRefusesTheKeyKeepsItsBackOff) {
  SshSpec spec = sshd_.spec();
  spec.key_file = sshd_.make_key("stranger", "", false);
  SshSession ssh("alpha", spec);
  ASSERT_FALSE(ssh.exec("true", milliseconds(5000)).ok());
  const auto attempts = ssh.connect_attempts();
  // The port answers all along: no handshake ends the window, so no new attempt is made.
  for (int i = 0; i < 3; ++i) {
    auto again = ssh.exec("true", milliseconds(5000));
    ASSERT_FALSE(again.ok());
    EXPECT_THAT(again.error().message, HasSubstr("not retrying for another"));
  }
  EXPECT_EQ(ssh.connect_attempts(), attempts);
}

TEST_F(ssh_session, ConnectTimesOutOnASilentServer) {
  // Accepts TCP connections (the kernel completes the handshake) but never speaks SSH.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 8), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);

  SshSpec spec = sshd_.spec();
  spec.port = ntohs(addr.sin_port);
  spec.connect_timeout_s = 0.5;
  SshSession ssh("silent", spec);
  const auto start = Clock::now();
  auto r = ssh.exec("true", milliseconds(5000));
  const double elapsed = ms_since(start);
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message, HasSubstr("site silent: "));
  EXPECT_GE(elapsed, 400.0);
  EXPECT_LT(elapsed, 1500.0);
}

// ---- client keys -------------------------------------------------------------------------------

TEST_F(ssh_session, UnauthorisedKeyIsRefusedWithAnAuthMessage) {
  SshSpec spec = sshd_.spec();
  spec.key_file = sshd_.make_key("stranger", "", false);
  SshSession ssh("alpha", spec);
  auto r = ssh.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(r.error().message, HasSubstr("site alpha: authentication as"));
  EXPECT_THAT(r.error().message, HasSubstr(spec.key_file));
  EXPECT_THAT(r.error().message, HasSubstr("authorized_keys"));
}

TEST_F(ssh_session, PassphraseComesFromTheNamedEnvironmentVariable) {
  SshSpec spec = sshd_.spec();
  spec.key_file = sshd_.make_key("locked", "correct horse");
  spec.key_passphrase_env = "ORCH_TEST_SSH_KEY_PASSPHRASE";

  ::unsetenv("ORCH_TEST_SSH_KEY_PASSPHRASE");
  SshSession unset("alpha", spec);
  auto r = unset.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::misconfigured);
  EXPECT_THAT(r.error().message, HasSubstr("ORCH_TEST_SSH_KEY_PASSPHRASE"));
  EXPECT_THAT(r.error().message, HasSubstr("not set"));
  EXPECT_EQ(unset.connect_attempts(), 0u);

  ::setenv("ORCH_TEST_SSH_KEY_PASSPHRASE", "wrong", 1);
  SshSession wrong("alpha", spec);
  r = wrong.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::misconfigured);
  EXPECT_THAT(r.error().message, HasSubstr("passphrase"));

  ::setenv("ORCH_TEST_SSH_KEY_PASSPHRASE", "correct horse", 1);
  SshSession ok("alpha", spec);
  auto good = ok.exec("echo unlocked", milliseconds(5000));
  ::unsetenv("ORCH_TEST_SSH_KEY_PASSPHRASE");
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->out, "unlocked\n");

  // An encrypted key without a passphrase variable, and a key file that is not there.
  spec.key_passphrase_env.clear();
  SshSession none("alpha", spec);
  r = none.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::misconfigured);
  EXPECT_THAT(r.error().message, HasSubstr("key_passphrase_env"));
  spec.key_file = sshd_.dir() + "/no-such-key";
  SshSession missing("alpha", spec);
  r = missing.exec("true", milliseconds(5000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::misconfigured);
  EXPECT_THAT(r.error().message, HasSubstr("no-such-key"));
}
}  // namespace
}  // namespace orch
