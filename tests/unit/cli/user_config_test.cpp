// The user's CLI config (issue 42): `serve` records its URL there, atomically, for the user
// alone, and the CLI's default server comes from it when neither --server nor $ORCH_URL names one.

#include "cli/user_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/client_commands.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

// A fresh XDG_CONFIG_HOME (and no ORCH_URL) for each test; the environment is put back after.
class UserConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/user-config-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    save("XDG_CONFIG_HOME", dir_ + "/xdg");
    save("ORCH_URL", "");
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
    std::filesystem::remove_all(dir_);
  }
  void save(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value.empty()) {
      ::unsetenv(name.c_str());
    } else {
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  static unsigned mode(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0;
  }

  std::string dir_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(UserConfig, ServeRecordsItsUrlInAFileOnlyTheUserCanRead) {
  std::ostringstream out, err;
  record_serving_url("https://127.0.0.1:18700", "ca.pem", out, err);
  const std::string path = dir_ + "/xdg/orchestrate/config.json";
  EXPECT_EQ(user_config_path(), path);
  EXPECT_EQ(err.str(), "");
  EXPECT_THAT(out.str(), HasSubstr("the CLI on this machine now uses https://127.0.0.1:18700"));
  EXPECT_THAT(out.str(), HasSubstr(path));
  EXPECT_EQ(mode(path), 0600u);
  EXPECT_EQ(mode(dir_ + "/xdg/orchestrate"), 0700u);
  auto record = read_server_record(path);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->server_url, "https://127.0.0.1:18700");
  EXPECT_TRUE(record->https);
  EXPECT_EQ(record->ca_file, (std::filesystem::current_path() / "ca.pem").string());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));
}

TEST_F(UserConfig, ANewRecordReplacesTheOldOneAndKeepsTheFilesOtherKeys) {
  std::filesystem::create_directories(dir_ + "/xdg/orchestrate");
  std::ofstream(dir_ + "/xdg/orchestrate/config.json")
      << R"({"theme": "dark", "server_url": "http://old:1", "ca_file": "/old.pem"})";
  std::string error;
  ASSERT_TRUE(write_server_record(user_config_path(), {"http://127.0.0.1:9000", false, ""}, error))
      << error;
  std::ifstream in(user_config_path());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("\"theme\": \"dark\""));
  EXPECT_THAT(text.str(), ::testing::Not(HasSubstr("old")));
  EXPECT_THAT(text.str(), HasSubstr("\"https\": false"));
}

TEST_F(UserConfig, TheDefaultServerIsOrchUrlThenTheRecordThenLoopback8080) {
  EXPECT_EQ(default_server_url(), "http://127.0.0.1:8080");
  std::ostringstream out, err;
  record_serving_url("http://0.0.0.0:18700", "", out, err);
  EXPECT_EQ(default_server_url(), "http://127.0.0.1:18700");
  ::setenv("ORCH_URL", "http://elsewhere:1", 1);
  EXPECT_EQ(default_server_url(), "http://elsewhere:1");
}

TEST_F(UserConfig, TheRecordedCaIsUsedOnlyForTheRecordedServer) {
  std::ostringstream out, err;
  record_serving_url("https://127.0.0.1:18700", "/pki/ca.pem", out, err);
  EXPECT_EQ(recorded_ca_file("https://127.0.0.1:18700"), "/pki/ca.pem");
  EXPECT_EQ(recorded_ca_file("https://other:443"), "");
}

TEST_F(UserConfig, AConfigThatIsNotAnObjectOrHasNoUrlIsIgnored) {
  std::filesystem::create_directories(dir_ + "/xdg/orchestrate");
  for (const char* text : {"not json", "[1, 2]", "{\"server_url\": 7}", "{\"server_url\": \"\"}"}) {
    std::ofstream(user_config_path()) << text;
    EXPECT_FALSE(read_server_record(user_config_path())) << text;
    EXPECT_EQ(default_server_url(), "http://127.0.0.1:8080") << text;
  }
  EXPECT_FALSE(read_server_record(dir_ + "/none.json"));
}

TEST_F(UserConfig, AConfigThatCannotBeWrittenIsAWarningThatNamesTheWayOut) {
  ::setenv("XDG_CONFIG_HOME", "/dev/null/nowhere", 1);
  std::ostringstream out, err;
  record_serving_url("http://127.0.0.1:18700", "", out, err);
  EXPECT_EQ(out.str(), "");
  EXPECT_THAT(err.str(), HasSubstr("WARNING: the CLI will not find this server by itself"));
  EXPECT_THAT(err.str(), HasSubstr("--server http://127.0.0.1:18700"));
}

TEST(ClientUrlFor, AWildcardBindIsReachedOnLoopback) {
  EXPECT_EQ(client_url_for("http://0.0.0.0:8080"), "http://127.0.0.1:8080");
  EXPECT_EQ(client_url_for("https://:::8443"), "https://[::1]:8443");
  EXPECT_EQ(client_url_for("http://::1:8080"), "http://[::1]:8080");
  EXPECT_EQ(client_url_for("https://10.0.0.5:8443"), "https://10.0.0.5:8443");
  EXPECT_EQ(client_url_for("http://127.0.0.1:18700"), "http://127.0.0.1:18700");
}

}  // namespace
}  // namespace orch
