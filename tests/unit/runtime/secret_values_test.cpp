// A job's secrets are read on the server just before the launch: a file's content or a variable
// of the server's environment; what cannot be read is named, and no error shows a value.
#include <gmock/gmock.h>

#include <cstdlib>
#include <fstream>

#include "scheduler/runtime/secret_values.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(SecretValues, AFileLosesOneTrailingNewlineAndAVariableIsTakenAsSet) {
  const std::string file = write_temp("secret_values_a", "hunter2\n");
  ::setenv("ORCH_TEST_SECRET_VALUE", "s3cret value", 1);
  auto values =
      read_secret_values({{"FROM_FILE", {file, ""}}, {"FROM_ENV", {"", "ORCH_TEST_SECRET_VALUE"}}});
  ::unsetenv("ORCH_TEST_SECRET_VALUE");
  ASSERT_TRUE(values.ok()) << values.error().message;
  EXPECT_EQ(values->at("FROM_FILE"), "hunter2");
  EXPECT_EQ(values->at("FROM_ENV"), "s3cret value");
  auto crlf = read_secret_values({{"K", {write_temp("secret_values_b", "x\r\n\n"), ""}}});
  ASSERT_TRUE(crlf.ok());
  EXPECT_EQ(crlf->at("K"), "x\r\n");  // one newline only: the rest is the secret's
}

TEST(SecretValues, WhatCannotBeReadIsNamedWithoutAValue) {
  auto missing = read_secret_values({{"KEY", {"/no/such/secret", ""}}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::invalid);
  EXPECT_THAT(missing.error().message, HasSubstr("secret_env KEY: cannot read /no/such/secret"));
  auto unset = read_secret_values({{"KEY", {"", "ORCH_TEST_NOT_SET_ANYWHERE"}}});
  ASSERT_FALSE(unset.ok());
  EXPECT_THAT(unset.error().message, HasSubstr("has no ORCH_TEST_NOT_SET_ANYWHERE"));
  const std::string nul = write_temp("secret_values_nul", std::string("qz9\0x7w", 7));
  auto with_nul = read_secret_values({{"KEY", {nul, ""}}});
  ASSERT_FALSE(with_nul.ok());
  EXPECT_THAT(with_nul.error().message, Not(HasSubstr("qz9")));
  const std::string big = write_temp("secret_values_big", std::string(kMaxSecretBytes + 1, 'x'));
  EXPECT_FALSE(read_secret_values({{"KEY", {big, ""}}}).ok());
}

}  // namespace
}  // namespace orch
