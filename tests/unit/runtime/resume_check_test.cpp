// The check right before a launch that resumes: candidates, newest first, are listed and hashed
// at the site and compared with their registered manifests. The first that matches is resumed
// from; a corrupt, partial or missing copy is reported as rejected, never used.
#include <gmock/gmock.h>

#include "scheduler/runtime/resume_check.h"
#include "tests/harness/fake_site.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const std::string kHashA(64, 'a');
const std::string kHashB(64, 'b');
const std::string kHashC(64, 'c');

Manifest directory_of(std::vector<ManifestFile> files) {
  Manifest m;
  m.directory = true;
  m.files = std::move(files);
  return m;
}

// A checkpoint of two files, as registered (and, unless a test changes it, as the site holds it).
Manifest checkpoint_files() {
  return directory_of({{"model.bin", 4096, kHashA}, {"opt.pt", 1024, kHashB}});
}

ResumeCandidate candidate(std::int64_t id, std::int64_t step, Manifest manifest) {
  return ResumeCandidate{id, step, "/ckpt/step-" + std::to_string(step), std::move(manifest)};
}

class ResumeCheckTest : public ::testing::Test {
 protected:
  // What the site holds at a candidate's path.
  void site_holds(const ResumeCandidate& c, Manifest m) {
    site.manifests.insert_or_assign(c.path, Result<Manifest>(std::move(m)));
  }
  void site_answers(const ResumeCandidate& c, Error e) {
    site.manifests.insert_or_assign(c.path, Result<Manifest>(std::move(e)));
  }
  std::vector<std::string> listed_paths() const {
    std::vector<std::string> paths;
    for (const auto& r : site.manifest_requests) paths.push_back(r.path);
    return paths;
  }

  FakeSite site;
  ResumeCandidate newest = candidate(30, 300, checkpoint_files());
  ResumeCandidate older = candidate(20, 200, checkpoint_files());
};

TEST_F(ResumeCheckTest, ACandidateOutsideItsDirectoryIsRejectedAsOutside) {
  newest.within = "/ckpt/job-7";
  site_answers(newest, make_error(ErrorKind::forbidden, "it resolves outside /ckpt/job-7"));
  site_holds(older, checkpoint_files());

  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_TRUE(choice.ok()) << choice.error().message;
  EXPECT_EQ(choice->checkpoint_id, 20);
  ASSERT_THAT(choice->rejected, SizeIs(1));
  EXPECT_TRUE(choice->rejected[0].outside);
  EXPECT_FALSE(choice->rejected[0].missing);
  EXPECT_EQ(site.manifest_requests.at(0).within, "/ckpt/job-7") << "the site checks it";
}

TEST_F(ResumeCheckTest, TheNewestCandidateThatMatchesIsChosen) {
  site_holds(newest, checkpoint_files());
  site_holds(older, checkpoint_files());

  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->checkpoint_id, 30);
  EXPECT_EQ(choice->step, 300);
  EXPECT_EQ(choice->path, newest.path);
  EXPECT_THAT(choice->rejected, IsEmpty());
  EXPECT_THAT(listed_paths(), ::testing::ElementsAre(newest.path)) << "older ones are not listed";
}

TEST_F(ResumeCheckTest, EveryFileOfACandidateIsHashedAtItsPath) {
  site_holds(newest, checkpoint_files());

  auto choice = check_resume_candidates(site, {newest});

  ASSERT_TRUE(choice.ok());
  ASSERT_THAT(site.manifest_requests, SizeIs(1));
  EXPECT_EQ(site.manifest_requests[0].path, newest.path);
  EXPECT_EQ(site.manifest_requests[0].hash, ManifestRequest::Hash::all);
  EXPECT_THAT(site.manifest_requests[0].hash_files, IsEmpty());
}

TEST_F(ResumeCheckTest, ACorruptNewerCandidateIsRejectedAndTheNextOneIsUsed) {
  site_holds(newest, directory_of({{"model.bin", 4096, kHashC}, {"opt.pt", 1024, kHashB}}));
  site_holds(older, checkpoint_files());

  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->checkpoint_id, 20);
  EXPECT_EQ(choice->step, 200);
  EXPECT_EQ(choice->path, older.path);
  ASSERT_THAT(choice->rejected, SizeIs(1));
  const RejectedCheckpoint& r = choice->rejected[0];
  EXPECT_EQ(r.checkpoint_id, 30);
  EXPECT_EQ(r.step, 300);
  EXPECT_FALSE(r.missing) << "present but different";
  EXPECT_THAT(r.why, HasSubstr("model.bin"));
  EXPECT_THAT(r.why, HasSubstr("SHA-256"));
}

TEST_F(ResumeCheckTest, APartialCopyIsRejectedNamingTheFileItLacks) {
  site_holds(newest, directory_of({{"model.bin", 4096, kHashA}}));
  site_holds(older, checkpoint_files());

  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->checkpoint_id, 20);
  ASSERT_THAT(choice->rejected, SizeIs(1));
  EXPECT_FALSE(choice->rejected[0].missing);
  EXPECT_THAT(choice->rejected[0].why, HasSubstr("opt.pt"));
  EXPECT_THAT(choice->rejected[0].why, HasSubstr("missing"));
}

TEST_F(ResumeCheckTest, ACandidateGoneFromTheSiteIsRejectedAsMissing) {
  site_answers(newest, make_error(ErrorKind::not_found, "/ckpt/step-300 does not exist"));
  site_holds(older, checkpoint_files());

  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->checkpoint_id, 20);
  ASSERT_THAT(choice->rejected, SizeIs(1));
  EXPECT_EQ(choice->rejected[0].checkpoint_id, 30);
  EXPECT_EQ(choice->rejected[0].step, 300);
  EXPECT_TRUE(choice->rejected[0].missing);
  EXPECT_THAT(choice->rejected[0].why, HasSubstr("does not exist"));
}

TEST_F(ResumeCheckTest, ACandidateTheSiteCannotReadIsRejectedButNotAsMissing) {
  site_answers(newest, make_error(ErrorKind::io, "sha256sum: model.bin: Input/output error"));
  site_holds(older, checkpoint_files());

  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->checkpoint_id, 20);
  ASSERT_THAT(choice->rejected, SizeIs(1));
  EXPECT_FALSE(choice->rejected[0].missing);
  EXPECT_THAT(choice->rejected[0].why, HasSubstr("Input/output error"));
}

TEST_F(ResumeCheckTest, WhenEveryCandidateIsRejectedTheJobStartsFromTheBeginning) {
  site_answers(newest, make_error(ErrorKind::not_found, "gone"));
  site_holds(older, directory_of({{"model.bin", 1, kHashA}, {"opt.pt", 1024, kHashB}}));

  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_TRUE(choice.ok());
  EXPECT_FALSE(choice->checkpoint_id.has_value());
  EXPECT_TRUE(choice->path.empty());
  ASSERT_THAT(choice->rejected, SizeIs(2));
  EXPECT_EQ(choice->rejected[0].checkpoint_id, 30) << "newest first";
  EXPECT_TRUE(choice->rejected[0].missing);
  EXPECT_EQ(choice->rejected[1].checkpoint_id, 20);
  EXPECT_FALSE(choice->rejected[1].missing);
  EXPECT_THAT(choice->rejected[1].why, HasSubstr("size 1, expected 4096"));
}

TEST_F(ResumeCheckTest, NoCandidatesMeansNoCheckpointAndNoQuestionToTheSite) {
  auto choice = check_resume_candidates(site, {});

  ASSERT_TRUE(choice.ok());
  EXPECT_FALSE(choice->checkpoint_id.has_value());
  EXPECT_THAT(choice->rejected, IsEmpty());
  EXPECT_THAT(site.manifest_requests, IsEmpty());
}

TEST_F(ResumeCheckTest, ACandidateNotListedYetIsAcceptedWhenTheSiteHoldsFilesThere) {
  ResumeCandidate unlisted = candidate(30, 300, Manifest{});
  site_holds(unlisted, checkpoint_files());

  auto choice = check_resume_candidates(site, {unlisted, older});

  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->checkpoint_id, 30);
  EXPECT_EQ(choice->path, unlisted.path);
  EXPECT_THAT(choice->rejected, IsEmpty());
}

TEST_F(ResumeCheckTest, ACandidateNotListedYetIsRejectedWhenTheSiteHoldsNothingThere) {
  ResumeCandidate unlisted = candidate(30, 300, Manifest{});
  site_holds(unlisted, directory_of({}));
  site_holds(older, checkpoint_files());

  auto choice = check_resume_candidates(site, {unlisted, older});

  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->checkpoint_id, 20);
  ASSERT_THAT(choice->rejected, SizeIs(1));
  EXPECT_EQ(choice->rejected[0].checkpoint_id, 30);
  EXPECT_TRUE(choice->rejected[0].missing);
  EXPECT_THAT(choice->rejected[0].why, HasSubstr(unlisted.path));
}

TEST_F(ResumeCheckTest, AProviderThatCannotListStorageGetsTheNewestCandidateUnchecked) {
  // Nothing scripted: the fake answers like ClusterPort's default, unsupported.
  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->checkpoint_id, 30);
  EXPECT_EQ(choice->path, newest.path);
  EXPECT_THAT(choice->rejected, IsEmpty());
  EXPECT_THAT(site.manifest_requests, SizeIs(1)) << "asked once, then trusted";
}

TEST_F(ResumeCheckTest, AnUnreachableSiteIsAnErrorNotARejection) {
  site_holds(newest, checkpoint_files());
  site.down = true;

  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.error().kind, ErrorKind::unreachable);
}

TEST_F(ResumeCheckTest, ASiteThatStopsAnsweringMidwayIsAnErrorEvenAfterARejection) {
  site_answers(newest, make_error(ErrorKind::not_found, "gone"));
  site_answers(older, make_error(ErrorKind::unreachable, "ssh: connection timed out"));

  auto choice = check_resume_candidates(site, {newest, older});

  ASSERT_FALSE(choice.ok()) << "the launch is retried later rather than started from scratch";
  EXPECT_EQ(choice.error().kind, ErrorKind::unreachable);
  EXPECT_THAT(choice.error().message, HasSubstr("timed out"));
}

}  // namespace
}  // namespace orch::testing
