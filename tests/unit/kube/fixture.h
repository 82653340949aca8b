#pragma once
// Reads a Kubernetes JSON fixture from tests/unit/kube/fixtures.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace orch::kube::testing {

inline std::string fixture(const std::string& relative) {
  std::string path = std::string(ORCH_SOURCE_DIR) + "/tests/unit/kube/fixtures/" + relative;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace orch::kube::testing
