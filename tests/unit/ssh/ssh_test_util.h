#pragma once
// Shared by the SshSession tests (ssh_session_test.cpp, ssh_session_connect_test.cpp): a real
// OpenSSH server on 127.0.0.1 per test (testkit/test_sshd.h) and small helpers.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "testkit/test_sshd.h"

namespace orch::ssh_test {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

inline std::string read_local(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class SshSessionTest : public ::testing::Test {
 protected:
  test::TestSshd sshd_;
};
// The suite's name is the binary's, so that `ctest -R ssh_session` selects these tests. Both
// test files use this one fixture type: gtest requires one fixture class per suite.
using ssh_session = SshSessionTest;

}  // namespace orch::ssh_test
