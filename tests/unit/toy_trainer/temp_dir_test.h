#pragma once
// The toy trainer tests' fixture: a fresh temporary directory (tmp_) for each test, removed
// after it.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

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

}  // namespace toy_test
