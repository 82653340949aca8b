// How a Kubernetes copy resumes (kube_copy_plan.h): what is still to send, from the source's
// listing and what the destination holds.
#include "adapters/kubernetes/kube_copy_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace orch::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Manifest dir(std::vector<ManifestFile> files) {
  Manifest m;
  m.directory = true;
  m.files = std::move(files);
  return m;
}

const Manifest kSource = dir({{"a", 100, "aa"}, {"b", 100, "bb"}, {"c", 100, "cc"}});

TEST(kube_copy_plan, NothingOfTheSourceAtTheDestinationIsAFreshCopyOfEverything) {
  const CopyPlan plan = plan_copy(kSource, dir({{"other", 5, ""}}), false);
  EXPECT_TRUE(plan.fresh);
  EXPECT_EQ(plan.bytes_to_send, 300U);
  EXPECT_THAT(plan.whole, IsEmpty());
}

TEST(kube_copy_plan, CompleteFilesAreSkippedAPartialOneContinuedAndMissingOnesSentWhole) {
  const CopyPlan plan = plan_copy(kSource, dir({{"a", 100, ""}, {"b", 40, ""}}), false);
  EXPECT_FALSE(plan.fresh);
  EXPECT_THAT(plan.whole, ElementsAre("c"));
  ASSERT_EQ(plan.tails.size(), 1U);
  EXPECT_EQ(plan.tails[0].path, "b");
  EXPECT_EQ(plan.tails[0].from, 40U);
  EXPECT_EQ(plan.tails[0].size, 100U);
  EXPECT_THAT(plan.compare, IsEmpty());
  EXPECT_EQ(plan.bytes_there, 140U);
  EXPECT_EQ(plan.bytes_to_send, 160U);
}

TEST(kube_copy_plan, ARetryComparesCompleteFilesByHash) {
  const CopyPlan plan = plan_copy(kSource, dir({{"a", 100, ""}, {"b", 100, ""}}), true);
  EXPECT_THAT(plan.compare, ElementsAre("a", "b"));
  EXPECT_THAT(plan.whole, ElementsAre("c"));
}

TEST(kube_copy_plan, AFileLargerAtTheDestinationIsSentWhole) {
  const CopyPlan plan = plan_copy(kSource, dir({{"a", 150, ""}, {"b", 100, ""}}), false);
  EXPECT_THAT(plan.whole, ElementsAre("a", "c"));
  EXPECT_THAT(plan.tails, IsEmpty());
}

TEST(kube_copy_plan, AFileWhereADirectoryIsCopiedStartsOver) {
  Manifest file;
  file.files = {{"", 100, ""}};
  EXPECT_TRUE(plan_copy(kSource, file, false).fresh);
}

TEST(kube_copy_plan, ASingleFileIsContinuedUnderItsEmptyPath) {
  Manifest source;
  source.files = {{"", 100, "x"}};
  Manifest there;
  there.files = {{"", 30, ""}};
  const CopyPlan plan = plan_copy(source, there, false);
  ASSERT_EQ(plan.tails.size(), 1U);
  EXPECT_EQ(plan.tails[0].path, "");
  EXPECT_EQ(plan.tails[0].from, 30U);
}

TEST(kube_copy_plan, FilesWhoseHashesDifferOrWereNotHashedAreMismatches) {
  const Manifest there = dir({{"a", 100, "aa"}, {"b", 100, "XX"}, {"c", 100, ""}});
  EXPECT_THAT(hash_mismatches(kSource, there, {"a", "b", "c", "d"}), ElementsAre("b", "c", "d"));
}

TEST(kube_copy_plan, TarNamesAreNulTerminatedAndCannotReadAsOptions) {
  EXPECT_EQ(tar_name_list({"-x", "sub/y z"}, "ignored"), std::string("./-x\0./sub/y z\0", 15));
  EXPECT_EQ(tar_name_list({""}, "model.pt"), std::string("model.pt\0", 9));
}

}  // namespace
}  // namespace orch::kube
