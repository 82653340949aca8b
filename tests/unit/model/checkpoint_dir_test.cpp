// A job's checkpoint directory and the lexical confinement of the paths it reports
// (scheduler/model/checkpoint_dir.h, issue 37).
#include <gtest/gtest.h>

#include <string>

#include "scheduler/model/checkpoint_dir.h"

namespace orch {
namespace {

using namespace std::string_literals;

constexpr const char* kDir = "/ckpt/job-1";

// The refusal's message, or "" when the path was accepted.
std::string refusal(const std::string& path, const std::string& dir = kDir) {
  auto r = confine_path(path, dir);
  if (r) return "";
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  return r.error().message;
}

TEST(CheckpointDir, JobAndReplicaDirectoriesAreUnderTheRootInNormalForm) {
  EXPECT_EQ(job_checkpoint_dir("/ckpt", 7), "/ckpt/job-7");
  EXPECT_EQ(job_checkpoint_dir("/ckpt/", 7), "/ckpt/job-7");
  EXPECT_EQ(job_checkpoint_dir("/state/./sites//a/checkpoints", 12),
            "/state/sites/a/checkpoints/job-12");
  EXPECT_EQ(job_replica_dir("/ckpt", 7), "/ckpt/.orchestrate/replicas/job-7");
  // A relative root stays as written (and confines nothing, below).
  EXPECT_EQ(job_checkpoint_dir("orch/ckpt", 3), "orch/ckpt/job-3");
  EXPECT_FALSE(strictly_inside(job_replica_dir("/ckpt", 7), job_checkpoint_dir("/ckpt", 7)));
}

TEST(CheckpointDir, NormalFormResolvesDotsAndSlashesLexically) {
  EXPECT_EQ(*normal_absolute_path("/a/b/../../etc"), "/etc");
  EXPECT_EQ(*normal_absolute_path("//a///b/"), "/a/b");
  EXPECT_EQ(*normal_absolute_path("/a/./b/."), "/a/b");
  EXPECT_EQ(*normal_absolute_path("/../../x"), "/x");
  EXPECT_EQ(*normal_absolute_path("/"), "/");
  EXPECT_EQ(*normal_absolute_path("/a/.."), "/");
  EXPECT_FALSE(normal_absolute_path(""));
  EXPECT_FALSE(normal_absolute_path("a/b"));
  EXPECT_FALSE(normal_absolute_path("/a\0b"s));
}

TEST(CheckpointDir, APathInsideTheDirectoryIsAcceptedInNormalForm) {
  EXPECT_EQ(*confine_path("/ckpt/job-1/step-10.ckpt", kDir), "/ckpt/job-1/step-10.ckpt");
  EXPECT_EQ(*confine_path("/ckpt/job-1//run/./step-10/", kDir), "/ckpt/job-1/run/step-10");
  EXPECT_EQ(*confine_path("/ckpt/job-1/a/../step-10", kDir), "/ckpt/job-1/step-10");
  EXPECT_EQ(*confine_path("/ckpt/job-1/step-10", "/ckpt//job-1/"), "/ckpt/job-1/step-10");
}

TEST(CheckpointDir, DotDotOutOfTheDirectoryIsRefused) {
  EXPECT_NE(refusal("/ckpt/job-1/../job-2/step-10").find("is outside the checkpoint directory"),
            std::string::npos);
  // The message shows where the path really points.
  EXPECT_NE(refusal("/ckpt/job-1/../job-2/step-10").find("'/ckpt/job-2/step-10'"),
            std::string::npos);
  EXPECT_NE(refusal("/ckpt/job-1/a/b/../../../../etc").find("outside"), std::string::npos);
  EXPECT_NE(refusal("/a/b/../../etc").find("outside"), std::string::npos);
  EXPECT_NE(refusal("/ckpt/job-1/..").find("outside"), std::string::npos);
}

TEST(CheckpointDir, TheDirectoryItselfIsNotACheckpoint) {
  for (const char* p :
       {"/ckpt/job-1", "/ckpt/job-1/", "//ckpt//job-1//", "/ckpt/job-1/.", "/ckpt/job-1/step/.."}) {
    EXPECT_NE(refusal(p).find("itself"), std::string::npos) << p;
  }
}

TEST(CheckpointDir, ASiblingWithTheSamePrefixIsOutside) {
  EXPECT_NE(refusal("/ckpt/job-10/step-1").find("outside"), std::string::npos);
  EXPECT_NE(refusal("/ckpt/job-1x").find("outside"), std::string::npos);
  EXPECT_NE(refusal("/ckpt/job-").find("outside"), std::string::npos);
  EXPECT_FALSE(strictly_inside("/ckpt/job-10", "/ckpt/job-1"));
  EXPECT_TRUE(strictly_inside("/ckpt/job-1/x", "/ckpt/job-1"));
  EXPECT_TRUE(strictly_inside("/x", "/"));
  EXPECT_FALSE(strictly_inside("/", "/"));
}

TEST(CheckpointDir, RelativeEmptyAndNulPathsAreRefused) {
  EXPECT_NE(refusal("step-10.ckpt").find("not absolute"), std::string::npos);
  EXPECT_NE(refusal("job-1/step-10").find("not absolute"), std::string::npos);
  EXPECT_NE(refusal("./step-10").find("not absolute"), std::string::npos);
  EXPECT_NE(refusal("").find("empty"), std::string::npos);
  const std::string nul = refusal("/ckpt/job-1/step\0/../../../etc"s);
  EXPECT_NE(nul.find("NUL"), std::string::npos);
  EXPECT_EQ(nul.find('\0'), std::string::npos);  // never echoed
}

TEST(CheckpointDir, WithoutAUsableDirectoryEverythingIsRefused) {
  EXPECT_NE(refusal("/x/job-1/s", "").find("no checkpoint directory"), std::string::npos);
  EXPECT_NE(refusal("/x/s", "/").find("no checkpoint directory"), std::string::npos);
  EXPECT_NE(refusal("/x/s", "//.").find("no checkpoint directory"), std::string::npos);
  EXPECT_NE(refusal("orch/ckpt/job-3/s", "orch/ckpt/job-3").find("no checkpoint directory"),
            std::string::npos);
}

TEST(CheckpointDir, LongPathsAreCutInMessages) {
  const std::string path = "/elsewhere/" + std::string(5000, 'x');
  EXPECT_LT(refusal(path).size(), 600u);
}

TEST(CheckpointDir, SpecSubdirectoryIsAPlainRelativePath) {
  EXPECT_EQ(*normal_relative_subdir("run1"), "run1");
  EXPECT_EQ(*normal_relative_subdir("a//b/"), "a/b");
  for (const std::string& bad : {""s, "/ckpt/run1"s, "../x"s, "a/../b"s, "./a"s, "a\0b"s}) {
    auto r = normal_relative_subdir(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  }
}

// Tiered checkpoints: "{node}" becomes the node's name; a name a job reported that would lead
// the directory elsewhere is refused.
TEST(CheckpointDir, ANodesOwnDirectoryFillsInItsName) {
  EXPECT_EQ(*node_local_job_dir("/local/orch", "gpu-a1", 7), "/local/orch/job-7");
  EXPECT_EQ(*node_local_job_dir("/disks/{node}/orch", "gpu-a1", 7), "/disks/gpu-a1/orch/job-7");
  EXPECT_EQ(node_local_dir_template("/disks/{node}/", 7), "/disks/{node}/job-7");
  for (const std::string& bad : {""s, "."s, ".."s, "a/b"s, "../x"s, std::string(65, 'n')}) {
    auto r = node_local_job_dir("/disks/{node}", bad, 7);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  }
}

}  // namespace
}  // namespace orch
