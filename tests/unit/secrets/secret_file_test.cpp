// read_secret_file: what an administrator may name as a secret's source, and what is refused
// at once without waiting on it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/secrets/secret_file.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class SecretFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("secret_file_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  fs::path dir_;
};

TEST_F(SecretFileTest, ARegularFileGivesItsContentWithoutTheTrailingNewline) {
  auto v = read_secret_file("secret hf", write("hf", "hf_abc123\r\n"));
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, "hf_abc123");
}

TEST_F(SecretFileTest, AFifoIsRefusedAtOnceNeverWaitedOn) {
  const std::string fifo = (dir_ / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto v = read_secret_file("secret p", fifo);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.error().message, HasSubstr("is a FIFO; a secret must be a regular file"));
  // Refused, not timed out: well under the read deadline.
  EXPECT_LT(std::chrono::steady_clock::now() - start, kSecretReadDeadline / 2);
}

TEST_F(SecretFileTest, ADirectoryIsNotAnEmptySecret) {
  auto v = read_secret_file("secret d", dir_.string());
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.error().message, HasSubstr("is a directory"));
}

TEST_F(SecretFileTest, ADeviceIsRefused) {
  auto v = read_secret_file("secret z", "/dev/zero");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.error().message, HasSubstr("is a character device"));
}

TEST_F(SecretFileTest, AOneGibibyteFileIsRefusedWithoutReadingIt) {
  const std::string big = (dir_ / "big").string();
  const int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 1LL << 30), 0);  // sparse: nothing is written
  ::close(fd);
  auto v = read_secret_file("secret big", big);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.error().message, HasSubstr("is larger than 65536 bytes"));
}

TEST_F(SecretFileTest, ANulByteIsRefusedAndTheValueIsNeverShown) {
  auto v = read_secret_file("secret n", write("n", std::string("abc\0def", 7)));
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.error().message, HasSubstr("NUL byte"));
  EXPECT_THAT(v.error().message, ::testing::Not(HasSubstr("abc")));
}

TEST_F(SecretFileTest, AMissingFileSaysWhy) {
  auto v = read_secret_file("secret m", (dir_ / "none").string());
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.error().message, HasSubstr("No such file"));
}

TEST_F(SecretFileTest, AVariableSourceReadsThisProcesssEnvironment) {
  ::setenv("ORCH_SECRET_FILE_TEST", "from-env", 1);
  auto v = read_secret_source_value("secret e", SecretSource{"", "ORCH_SECRET_FILE_TEST"});
  ::unsetenv("ORCH_SECRET_FILE_TEST");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, "from-env");
  auto unset = read_secret_source_value("secret e", SecretSource{"", "ORCH_SECRET_FILE_TEST"});
  ASSERT_FALSE(unset.ok());
  EXPECT_THAT(unset.error().message, HasSubstr("has no ORCH_SECRET_FILE_TEST"));
}

}  // namespace
}  // namespace orch
