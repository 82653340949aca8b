#pragma once
// Reads a captured Slurm output from tests/unit/slurm/fixtures.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace orch::slurm::testing {

inline std::string fixture(const std::string& relative) {
  std::string path = std::string(ORCH_SOURCE_DIR) + "/tests/unit/slurm/fixtures/" + relative;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace orch::slurm::testing
