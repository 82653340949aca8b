// The storage scripts confined to a directory (issue 37), through the real /bin/sh on temporary
// trees: a job's checkpoint directory holds its copies; a symbolic link out of it (the copy, a
// parent, or the directory itself) is refused by the listing and by the deletion, which read
// and delete nothing, and what the link leads to is still there afterwards.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "adapters/storage/local_storage.h"
#include "adapters/storage/storage_script.h"

namespace orch::storage {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kShaAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

// Two users' checkpoint directories side by side: <root>/ckpt/job-1 (A, the victim) and
// <root>/ckpt/job-2 (B, whose copies are checked), and a file outside both.
class ConfinementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "orch-confine-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    a_ = root_ + "/ckpt/job-1";
    b_ = root_ + "/ckpt/job-2";
    write(a_ + "/step-10/model.bin", "abc");
    write(a_ + "/step-10.ckpt", "abc");
    write(root_ + "/secret", "abc");
    fs::create_directories(b_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  static void write(const std::string& path, const std::string& content) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << content;
  }

  // A's files, all still there.
  void expect_a_intact() const {
    EXPECT_TRUE(fs::exists(a_ + "/step-10/model.bin"));
    EXPECT_TRUE(fs::exists(a_ + "/step-10.ckpt"));
    EXPECT_TRUE(fs::exists(root_ + "/secret"));
  }

  static Result<Manifest> list(const std::string& path, const std::string& within,
                               ManifestRequest::Hash hash = ManifestRequest::Hash::all,
                               std::vector<std::string> names = {}) {
    ManifestRequest r;
    r.path = path;
    r.within = within;
    r.hash = hash;
    r.hash_files = std::move(names);
    return local_manifest(r);
  }

  static void expect_forbidden(const Result<Manifest>& m, const std::string& what) {
    ASSERT_FALSE(m.ok()) << what;
    EXPECT_EQ(m.error().kind, ErrorKind::forbidden) << what << ": " << m.error().message;
  }
  static void expect_forbidden(const Result<void>& r, const std::string& what) {
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.error().kind, ErrorKind::forbidden) << what << ": " << r.error().message;
  }

  std::string root_;
  std::string a_;
  std::string b_;
};

TEST_F(ConfinementTest, ACopyInsideItsDirectoryIsListedAndDeletedAsBefore) {
  write(b_ + "/step-20/model.bin", "abc");
  write(b_ + "/step-30.ckpt", "abc");
  auto dir = list(b_ + "/step-20", b_);
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  ASSERT_EQ(dir->files.size(), 1u);
  EXPECT_EQ(dir->files[0].sha256, kShaAbc);
  auto file = list(b_ + "//step-30.ckpt", b_ + "/");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->files.at(0).sha256, kShaAbc);
  auto listed = list(b_ + "/step-20", b_, ManifestRequest::Hash::listed, {"model.bin"});
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  EXPECT_EQ(listed->files.at(0).sha256, kShaAbc);

  ASSERT_TRUE(local_remove({b_ + "/step-20", b_}).ok());
  ASSERT_TRUE(local_remove({b_ + "/step-30.ckpt", b_}).ok());
  EXPECT_FALSE(fs::exists(b_ + "/step-20"));
  EXPECT_FALSE(fs::exists(b_ + "/step-30.ckpt"));
  EXPECT_TRUE(fs::exists(b_));
}

TEST_F(ConfinementTest, PathsOutsideTheDirectoryAreRefusedBeforeAnyScriptRuns) {
  for (const std::string& p : {a_ + "/step-10", b_ + "/../job-1/step-10", b_, root_ + "/secret",
                               root_ + "/ckpt/job-20/x"}) {
    auto s = manifest_script({p, ManifestRequest::Hash::all, {}, b_});
    ASSERT_FALSE(s.ok()) << p;
    EXPECT_EQ(s.error().kind, ErrorKind::forbidden) << p;
    expect_forbidden(list(p, b_), p);
    expect_forbidden(local_remove({p, b_}), p);
  }
  expect_a_intact();
}

TEST_F(ConfinementTest, ACheckpointThatIsALinkOutIsNeitherListedNorDeleted) {
  fs::create_directory_symlink(a_ + "/step-10", b_ + "/step-1");
  fs::create_symlink(a_ + "/step-10.ckpt", b_ + "/step-2.ckpt");
  fs::create_symlink("../job-1/step-10.ckpt", b_ + "/step-3.ckpt");  // relative
  for (const std::string& p : {b_ + "/step-1", b_ + "/step-2.ckpt", b_ + "/step-3.ckpt"}) {
    auto m = list(p, b_);
    expect_forbidden(m, p);
    if (!m.ok()) {
      EXPECT_THAT(m.error().message, HasSubstr("nothing was read"));
    }
    expect_forbidden(list(p, b_, ManifestRequest::Hash::none), p);
    auto removed = local_remove({p, b_});
    expect_forbidden(removed, p);
    if (!removed.ok()) {
      EXPECT_THAT(removed.error().message, HasSubstr("nothing was deleted"));
    }
    EXPECT_TRUE(fs::is_symlink(p)) << p;
  }
  expect_a_intact();
}

TEST_F(ConfinementTest, AParentThatIsALinkOutIsNeitherListedNorDeleted) {
  fs::create_directory_symlink(a_, b_ + "/run");  // B's "run" is A's whole directory
  for (const std::string& p : {b_ + "/run/step-10", b_ + "/run/step-10.ckpt"}) {
    expect_forbidden(list(p, b_), p);
    expect_forbidden(local_remove({p, b_}), p);
  }
  expect_a_intact();
}

TEST_F(ConfinementTest, ADirectoryThatIsItselfALinkOutHoldsNothing) {
  // B replaced its own directory with a link to A's: every path "inside" it is A's.
  fs::remove_all(b_);
  fs::create_directory_symlink(a_, b_);
  for (const std::string& p : {b_ + "/step-10", b_ + "/step-10.ckpt", b_ + "/step-10/model.bin"}) {
    expect_forbidden(list(p, b_), p);
    expect_forbidden(local_remove({p, b_}), p);
  }
  expect_a_intact();
}

TEST_F(ConfinementTest, ADirectoryThatDoesNotExistHoldsNothingToDelete) {
  const std::string gone = root_ + "/ckpt/job-3";
  auto m = list(gone + "/step-1", gone);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::not_found);
  EXPECT_TRUE(local_remove({gone + "/step-1", gone}).ok());
  expect_a_intact();
}

TEST_F(ConfinementTest, AListedFileIsHashedWhenNoLinkLiesOnItsWay) {
  // The audit names files of the registered manifest; one whose directory became a link to A's
  // is skipped as a missing name is (and a link is never listed), the others are hashed.
  write(b_ + "/step-20/own.bin", "abc");
  fs::create_directory_symlink(a_ + "/step-10", b_ + "/step-20/shard");
  auto m = list(b_ + "/step-20", b_, ManifestRequest::Hash::listed, {"own.bin", "shard/model.bin"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->files.size(), 1u) << "a link inside the copy is never listed";
  EXPECT_EQ(m->files[0].path, "own.bin");
  EXPECT_EQ(m->files[0].sha256, kShaAbc);
  expect_a_intact();
}

TEST_F(ConfinementTest, AnUnconfinedListingStillFollowsALinkAtTheRoot) {
  // A person's dataset (no `within`) is listed where it is, as before.
  fs::create_directory_symlink(a_ + "/step-10", root_ + "/dataset");
  auto m = list(root_ + "/dataset", "");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->files.size(), 1u);
}

TEST(RemoveOutput, TheOutsideMarkerIsForbiddenAndOtherwiseAsBefore) {
  const RemoveRequest r{"/ckpt/job-2/step-1", "/ckpt/job-2"};
  auto outside = check_remove_output("orchestrate-remove: outside\n", "it is a link\n", 0, r);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().kind, ErrorKind::forbidden);
  EXPECT_THAT(outside.error().message, HasSubstr("it is a link"));
  EXPECT_TRUE(check_remove_output("", "", 0, r).ok());
  auto failed = check_remove_output("", "rm: Permission denied\n", 1, r);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::io);
}

TEST(ParseManifestOutput, TheOutsideRecordIsForbidden) {
  const std::string out = std::string("orchestrate-manifest-v1\0outside\0end\0", 36);
  auto m = parse_manifest_output(out, "", 0, "/ckpt/job-2/step-1");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::forbidden);
}

}  // namespace
}  // namespace orch::storage
