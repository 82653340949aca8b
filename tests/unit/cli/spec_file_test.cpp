// read_spec_file and `job submit` on inputs that are not a small regular file: a directory,
// a file over the server's body limit, /dev/zero (which used to hang the client).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "cli/client_commands.h"
#include "cli/spec_file.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/cli_spec_file_" + name;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

TEST(ReadSpecFile, ReadsASmallFileWhole) {
  const std::string path = temp_path("small.yaml");
  write_file(path, "name: a\ncommand: b\n");
  std::string text, error;
  ASSERT_TRUE(read_spec_file(path, 1 << 20, text, error)) << error;
  EXPECT_EQ(text, "name: a\ncommand: b\n");
}

TEST(ReadSpecFile, AFileOfExactlyTheLimitIsFine) {
  const std::string path = temp_path("exact.yaml");
  write_file(path, std::string(1000, '#'));
  std::string text, error;
  ASSERT_TRUE(read_spec_file(path, 1000, text, error)) << error;
  EXPECT_EQ(text.size(), 1000u);
}

TEST(ReadSpecFile, AFileOverTheLimitIsRefusedBySize) {
  const std::string path = temp_path("big.yaml");
  write_file(path, std::string(1001, '#'));
  std::string text = "untouched", error;
  EXPECT_FALSE(read_spec_file(path, 1000, text, error));
  EXPECT_EQ(text, "untouched");
  EXPECT_THAT(error, HasSubstr("job spec " + path +
                               " is 1001 bytes, and the server takes job "
                               "specs of at most 1000 bytes"));
}

TEST(ReadSpecFile, ADirectoryIsRefused) {
  std::string text, error;
  EXPECT_FALSE(read_spec_file(::testing::TempDir(), 1 << 20, text, error));
  EXPECT_THAT(error, HasSubstr("is a directory; expected a YAML or JSON job spec"));
}

TEST(ReadSpecFile, AMissingFileSaysWhy) {
  std::string text, error;
  EXPECT_FALSE(read_spec_file("/no/such/job.yaml", 1 << 20, text, error));
  EXPECT_THAT(error, HasSubstr("cannot read job spec /no/such/job.yaml: No such file"));
}

TEST(ReadSpecFile, DevZeroIsReadOnlyUpToTheLimit) {
  const auto start = std::chrono::steady_clock::now();
  std::string text, error;
  EXPECT_FALSE(read_spec_file("/dev/zero", 1 << 20, text, error));
  EXPECT_THAT(error, HasSubstr("job spec /dev/zero is larger than 1 MiB (it was read no further)"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ReadSpecFile, APipeWithinTheLimitIsRead) {
  const std::string fifo = temp_path("fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { write_file(fifo, "name: a\n"); });
  std::string text, error;
  EXPECT_TRUE(read_spec_file(fifo, 1 << 20, text, error)) << error;
  writer.join();
  EXPECT_EQ(text, "name: a\n");
  ::unlink(fifo.c_str());
}

// `job submit` fails before it calls any server, so no server is needed.
TEST(JobSubmit, ADirectoryIsAUsageError) {
  ClientOptions options;
  options.server = "http://127.0.0.1:9";
  std::ostringstream out, err;
  EXPECT_EQ(run_job_submit(options, ::testing::TempDir(), out, err), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("is a directory"));
}

TEST(JobSubmit, DevZeroIsAUsageErrorAndDoesNotHang) {
  ClientOptions options;
  options.server = "http://127.0.0.1:9";
  std::ostringstream out, err;
  EXPECT_EQ(run_job_submit(options, "/dev/zero", out, err), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("the server takes job specs of at most 1 MiB"));
}

}  // namespace
}  // namespace orch
