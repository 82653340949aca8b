// The programs serve and demo need: found or reported with their package, only for providers
// that are configured, and installed by the Makefile (`make deps`): the Makefile's
// RUN_PACKAGES and required_programs() name the same packages.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "server/required_programs.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

// The words of the Makefile variable `name := ...`, across continuation lines.
std::set<std::string> makefile_list(const std::string& name) {
  std::ifstream in(std::string(ORCH_SOURCE_DIR) + "/Makefile");
  std::string line, text;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line.rfind(name + " :=", 0) != 0) continue;
    if (!inside) line = line.substr(name.size() + 3);
    inside = !line.empty() && line.back() == '\\';
    if (inside) line.pop_back();
    text += " " + line;
    if (!inside) break;
  }
  std::istringstream words(text);
  std::set<std::string> out;
  for (std::string w; words >> w;) out.insert(w);
  return out;
}

TEST(RequiredPrograms, MakeDepsInstallsEveryPackageTheyComeFrom) {
  std::set<std::string> packages;
  for (const RequiredProgram& p : required_programs()) packages.emplace(p.package);
  const std::set<std::string> run_packages = makefile_list("RUN_PACKAGES");
  EXPECT_EQ(run_packages, packages)
      << "keep RUN_PACKAGES in the Makefile and server/required_programs.cpp in agreement";
}

TEST(RequiredPrograms, MakeDepsIncludesRunPackages) {
  std::ifstream in(std::string(ORCH_SOURCE_DIR) + "/Makefile");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(),
              HasSubstr("$(call apt_install_missing,deps,$(DEB_PACKAGES) $(RUN_PACKAGES))"));
}

TEST(RequiredPrograms, AllFoundInThisMachinesPath) {
  ClusterSpec local;
  local.provider = "local";
  const char* path = std::getenv("PATH");
  EXPECT_THAT(missing_programs({local}, path ? path : ""), ::testing::IsEmpty());
}

TEST(RequiredPrograms, AnEmptyPathMissesEverythingButAbsolutePaths) {
  ClusterSpec local;
  local.provider = "local";
  const std::string empty_dir = ::testing::TempDir() + "/required_programs_empty";
  ::mkdir(empty_dir.c_str(), 0700);
  auto missing = missing_programs({local}, empty_dir);
  std::set<std::string> names;
  for (const auto& p : missing) names.emplace(p.program);
  EXPECT_EQ(names, (std::set<std::string>{"rsync", "sha256sum", "stat", "find"}));
  const std::string message = missing_programs_message(missing);
  EXPECT_THAT(message, HasSubstr("  rsync (Debian package rsync): copies checkpoints"));
  EXPECT_THAT(message, HasSubstr("  find (Debian package findutils): "));
  EXPECT_THAT(message, HasSubstr("install with: apt-get install rsync coreutils findutils"));
}

TEST(RequiredPrograms, SshOnlyWhenASlurmClusterIsConfigured) {
  const std::string empty_dir = ::testing::TempDir() + "/required_programs_empty";
  ::mkdir(empty_dir.c_str(), 0700);
  ClusterSpec local, slurm;
  local.provider = "local";
  slurm.provider = "slurm";
  auto has_ssh = [](const std::vector<RequiredProgram>& missing) {
    for (const auto& p : missing) {
      if (p.program == "ssh") return true;
    }
    return false;
  };
  EXPECT_FALSE(has_ssh(missing_programs({local}, empty_dir)));
  auto missing = missing_programs({local, slurm}, empty_dir);
  EXPECT_TRUE(has_ssh(missing));
  EXPECT_THAT(missing_programs_message(missing),
              HasSubstr("ssh (Debian package openssh-client): carries rsync to and from Slurm "
                        "clusters (slurm clusters are configured)"));
  EXPECT_EQ(missing_programs_message({}), "");
}

}  // namespace
}  // namespace orch
