// What a failed rsync becomes (adapters/transfer/rsync_failure.h): unreachable when a login
// node could not be reached, else io with rsync's reason, on stderr captured from real runs.
#include "adapters/transfer/rsync_failure.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace orch::transfer {
namespace {

using ::testing::HasSubstr;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(ORCH_SOURCE_DIR) + "/tests/unit/transfer/fixtures/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RsyncFailure, AMissingSourceIsAnIoErrorWithRsyncsWords) {
  Error e =
      rsync_failure("transfer 3 (local, a:/x -> b:/y)", {23, 0}, fixture("missing_source.err"));
  EXPECT_EQ(e.kind, ErrorKind::io);
  EXPECT_THAT(e.message, HasSubstr("transfer 3 (local, a:/x -> b:/y): rsync exited 23 "
                                   "(partial transfer due to error): "));
  EXPECT_THAT(e.message, HasSubstr("No such file or directory"));
}

TEST(RsyncFailure, SshsExit255IsAnUnreachableSite) {
  const std::string err =
      "ssh: connect to host 127.0.0.1 port 27412: Connection refused\r\n"
      "rsync: connection unexpectedly closed (0 bytes received so far) [Receiver]\n"
      "rsync error: unexplained error (code 255) at io.c(232) [Receiver=3.5.0]\n";
  Error e = rsync_failure("transfer 1", {255, 0}, err);
  EXPECT_EQ(e.kind, ErrorKind::unreachable);
  EXPECT_THAT(e.message, HasSubstr("Connection refused"));
}

TEST(RsyncFailure, AConnectionLostMidCopyIsUnreachableToo) {
  Error e = rsync_failure(
      "t", {12, 0},
      "rsync: connection unexpectedly closed (1,234 bytes received so far) [receiver]\n");
  EXPECT_EQ(e.kind, ErrorKind::unreachable);
  // ... but a protocol error that is not about the connection is not.
  EXPECT_EQ(rsync_failure("t", {12, 0}, "rsync: protocol version mismatch\n").kind, ErrorKind::io);
}

TEST(RsyncFailure, ASignalIsNamed) {
  Error e = rsync_failure("t", {-1, 9}, "");
  EXPECT_EQ(e.kind, ErrorKind::io);
  EXPECT_THAT(e.message, HasSubstr("killed by signal 9"));
}

TEST(RsyncLastLines, KeepsTheLastNonBlankLines) {
  EXPECT_EQ(last_lines("a\n\nb\r\nc  \n\n", 2), "b | c");
  EXPECT_EQ(last_lines("", 3), "");
  EXPECT_EQ(last_lines("only", 3), "only");
}

TEST(RsyncSaysUnreachable, OpenSshsWordsForAFailedConnection) {
  EXPECT_TRUE(says_unreachable("ssh: connect to host x port 22: Connection timed out"));
  EXPECT_TRUE(says_unreachable("Host key verification failed."));
  EXPECT_TRUE(says_unreachable("root@127.0.0.1: Permission denied (publickey)."));
  EXPECT_FALSE(says_unreachable("rsync: [Receiver] mkdir \"/x\" failed: Permission denied (13)"));
}

}  // namespace
}  // namespace orch::transfer
