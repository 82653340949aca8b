#pragma once
// What the toy trainer tests share: a fixture with a fresh temporary directory (tmp_) for each
// test, removed after it, and the exec of the trainer in a forked child.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace toy_test {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "toy_trainer_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    tmp_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(tmp_); }
  std::filesystem::path tmp_;
};

// In a forked child: `env` on top of this process's environment, then exec the build's
// toy_trainer with `args`; exits 127 when that fails.
[[noreturn]] inline void exec_toy_trainer(const std::vector<std::string>& args,
                                          const std::map<std::string, std::string>& env) {
  for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
  std::string bin = ORCH_BIN_DIR "/toy_trainer";
  std::vector<char*> argv = {bin.data()};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(bin.c_str(), argv.data());
  ::_exit(127);
}

}  // namespace toy_test
