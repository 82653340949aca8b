// A job file's `workdir:`, `setup:` and `setup_per_node:` (issue 40): what they read into,
// what they refuse and where, and that the stored (JSON) form reads back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"
#include "scheduler/spec/workdir_section.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

const std::string kHash(64, 'a');

Result<JobSpec> job(const std::string& extra) {
  return parse_job_spec("name: a\ncommand: python -m pkg.train\n" + extra, "job.yaml");
}

TEST(WorkdirSpec, AJobWithoutWorkdirHasNone) {
  auto spec = job("");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_TRUE(spec->workdir.sha256.empty());
  EXPECT_TRUE(spec->workdir.source.empty());
  EXPECT_TRUE(spec->setup.empty());
  EXPECT_FALSE(spec->setup_per_node);
}

TEST(WorkdirSpec, ASubmittedWorkdirIsAPathWithNoHashYet) {
  auto spec = job("workdir: ./src\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->workdir.source, "./src");
  EXPECT_TRUE(spec->workdir.sha256.empty());  // the server fills it in at submit
}

TEST(WorkdirSpec, TheStoredFormIsAMapWithTheHash) {
  auto spec = job("workdir: {source: ./src, sha256: " + kHash + ", bytes: 10240}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->workdir.sha256, kHash);
  EXPECT_EQ(spec->workdir.bytes, 10240);
}

TEST(WorkdirSpec, ABadHashIsRefusedAtItsLine) {
  auto spec = job("workdir: {source: ., sha256: ABC}\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message, HasSubstr("job.yaml:3:"));
  EXPECT_THAT(spec.error().message, HasSubstr("64 lowercase hexadecimal"));
  EXPECT_FALSE(job("workdir: {source: ., bytes: -1}\n").ok());
  EXPECT_FALSE(job("workdir: {path: .}\n").ok());
  EXPECT_FALSE(job("workdir: [a]\n").ok());
  EXPECT_FALSE(job("workdir: \"\"\n").ok());
}

TEST(WorkdirSpec, SetupIsAStringOrAListOfLines) {
  auto one = job("setup: pip install -e .\n");
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->setup, "pip install -e .");
  auto lines = job("setup:\n  - python -m venv .venv\n  - .venv/bin/pip install -e .\n");
  ASSERT_TRUE(lines.ok()) << lines.error().message;
  EXPECT_EQ(lines->setup, "python -m venv .venv\n.venv/bin/pip install -e .");
  auto block = job("setup: |\n  a\n  b\nsetup_per_node: true\n");
  ASSERT_TRUE(block.ok()) << block.error().message;
  EXPECT_EQ(block->setup, "a\nb\n");
  EXPECT_TRUE(block->setup_per_node);
}

TEST(WorkdirSpec, SetupPerNodeWithoutSetupIsRefused) {
  auto spec = job("setup_per_node: true\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message, HasSubstr("job.yaml:3:"));
  EXPECT_THAT(spec.error().message, HasSubstr("no \"setup\""));
}

TEST(WorkdirSpec, AnOversizedSetupIsRefused) {
  auto spec = job("setup: \"" + std::string(200000, 'x') + "\"\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message, HasSubstr("\"setup\" is 200000 bytes"));
}

TEST(WorkdirSpec, TheStoredSpecReadsBackWithWorkdirAndSetup) {
  JobSpec s;
  s.name = "a";
  s.command = "true";
  s.workdir = {"./src", kHash, 4096};
  s.setup = "python -m venv .venv\n.venv/bin/pip install -e .";
  s.setup_per_node = true;
  const nlohmann::json j = job_spec_to_json(s);
  auto back = job_spec_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << j.dump(2);
  EXPECT_EQ(back->workdir.source, "./src");
  EXPECT_EQ(back->workdir.sha256, kHash);
  EXPECT_EQ(back->workdir.bytes, 4096);
  EXPECT_EQ(back->setup, s.setup);
  EXPECT_TRUE(back->setup_per_node);
  EXPECT_EQ(job_spec_to_json(*back).dump(), j.dump());
  JobSpec plain;
  plain.name = "a";
  plain.command = "true";
  const nlohmann::json none = job_spec_to_json(plain);
  EXPECT_FALSE(none.contains("workdir"));
  EXPECT_FALSE(none.contains("setup"));
}

TEST(WorkdirSpec, Sha256HexIsLowercaseAndSixtyFourDigits) {
  EXPECT_TRUE(is_sha256_hex(kHash));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a')));
  EXPECT_FALSE(is_sha256_hex(std::string(64, 'A')));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a') + "/"));
}

}  // namespace
}  // namespace orch
