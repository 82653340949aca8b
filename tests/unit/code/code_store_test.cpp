// The server's store of workdir archives (adapters/code/code_store.h): hostile uploads are
// refused naming the member and why, a good one is kept atomically with its uploader, and a
// user sees only what they uploaded themselves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "adapters/code/code_store.h"
#include "tests/unit/code/archive_builder.h"

namespace orch {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_archive::ArchiveBuilder;

std::string refusal(const std::string& archive) {
  auto r = check_workdir_archive(archive);
  return r.ok() ? "accepted" : r.error().message;
}

TEST(WorkdirArchive, AnOrdinaryTreeIsAccepted) {
  EXPECT_EQ(refusal(ArchiveBuilder()
                        .dir("pkg")
                        .file("pkg/__init__.py", "")
                        .file("pkg/train.py", std::string(1000, 'x'), 0755)
                        .symlink("latest", "pkg/train.py")
                        .end()),
            "accepted");
  EXPECT_EQ(refusal(ustar::end_of_archive()), "accepted");  // an empty tree
}

TEST(WorkdirArchive, GnuTarsDotPrefixIsTakenAsTheTreeItself) {
  EXPECT_EQ(refusal(ArchiveBuilder().dir(".").dir("./pkg").file("./pkg/a.py", "1").end()),
            "accepted");
  EXPECT_THAT(refusal(ArchiveBuilder().file("./../x", "1").end()),
              HasSubstr("not a normal relative path"));
  EXPECT_THAT(refusal(ArchiveBuilder().file("./a", "1").file("a", "2").end()), HasSubstr("twice"));
}

TEST(WorkdirArchive, WhatGnuTarWritesAsDocsRestApiSaysIsAccepted) {
  const fs::path dir = fs::temp_directory_path() / ("gnu_tar_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "src/pkg");
  std::ofstream(dir / "src/pkg/a.py") << "print(1)\n";
  fs::create_symlink("pkg/a.py", dir / "src/run.py");
  const std::string cmd =
      "tar --format=ustar --sort=name --owner=0 --group=0 --numeric-owner "
      "--mtime=@0 -C " +
      (dir / "src").string() + " -cf " + (dir / "src.tar").string() + " .";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(dir / "src.tar", std::ios::binary);
  const std::string archive((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(refusal(archive), "accepted");
  fs::remove_all(dir);
}

TEST(WorkdirArchive, DotDotAndAbsoluteNamesAreRefused) {
  EXPECT_THAT(refusal(ArchiveBuilder().file("../evil", "x").end()),
              HasSubstr("\"../evil\" is not a normal relative path"));
  EXPECT_THAT(refusal(ArchiveBuilder().file("pkg/../../evil", "x").end()),
              HasSubstr("not a normal relative path"));
  EXPECT_THAT(refusal(ArchiveBuilder().file("/etc/cron.d/evil", "x").end()),
              HasSubstr("absolute name"));
}

TEST(WorkdirArchive, ASymlinkOutOfTheTreeIsRefused) {
  EXPECT_THAT(refusal(ArchiveBuilder().symlink("keys", "/home/alice/.ssh").end()),
              HasSubstr("points out of the tree"));
  EXPECT_THAT(refusal(ArchiveBuilder().dir("a").symlink("a/up", "../..").end()),
              HasSubstr("points out of the tree"));
}

TEST(WorkdirArchive, AMemberBelowASymlinkOfTheArchiveIsRefused) {
  // "s" -> "." is inside, but "s/t" -> ".." would then land in the tree's parent.
  EXPECT_THAT(refusal(ArchiveBuilder().symlink("s", "a").dir("a").file("s/x", "y").end()),
              HasSubstr("lies below the symlink \"s\""));
}

TEST(WorkdirArchive, HardLinksDevicesAndFifosAreRefused) {
  EXPECT_THAT(refusal(ArchiveBuilder().typed("passwd", '1', "/etc/passwd").end()),
              HasSubstr("hard link"));
  EXPECT_THAT(refusal(ArchiveBuilder().typed("sda", '4').end()), HasSubstr("device"));
  EXPECT_THAT(refusal(ArchiveBuilder().typed("pipe", '6').end()), HasSubstr("fifo"));
  EXPECT_THAT(refusal(ArchiveBuilder().typed("long", 'L').end()), HasSubstr("extension"));
}

TEST(WorkdirArchive, SetuidBitsAreRefused) {
  EXPECT_THAT(refusal(ArchiveBuilder().typed("x", '0').end()), "accepted");
  std::string block = *ustar::header({"suid", ustar::Kind::file, 0755, 0, ""});
  block.replace(100, 7, "0004755");
  ArchiveBuilder::reseal(block);
  EXPECT_THAT(refusal(ArchiveBuilder().raw(block).end()), HasSubstr("beyond 0777"));
}

TEST(WorkdirArchive, TruncatedArchivesAreRefused) {
  const std::string whole = ArchiveBuilder().file("a", std::string(2000, 'x')).end();
  EXPECT_THAT(refusal(whole.substr(0, 1536)), HasSubstr("cut short in the member \"a\""));
  EXPECT_THAT(refusal(whole.substr(0, 512 * 5)), HasSubstr("no end"));
  EXPECT_THAT(refusal(whole.substr(0, 1000)), HasSubstr("512-byte blocks"));
  EXPECT_THAT(refusal(whole.substr(0, whole.size() - 512)), HasSubstr("single zero block"));
  EXPECT_THAT(refusal(whole + std::string(511, '\0') + "x"), HasSubstr("data after its end"));
}

TEST(WorkdirArchive, AHugeDeclaredSizeIsCutShortNotRead) {
  std::string block = *ustar::header({"big", ustar::Kind::file, 0644, 077777777777ULL, ""});
  EXPECT_THAT(refusal(ArchiveBuilder().raw(block).end()), HasSubstr("cut short"));
}

TEST(WorkdirArchive, ANameTwiceIsRefused) {
  EXPECT_THAT(refusal(ArchiveBuilder().file("a", "1").symlink("a", "b").end()), HasSubstr("twice"));
}

class CodeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("code_store_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(CodeStoreTest, AnUploadIsKeptUnderItsHashWithItsUploader) {
  CodeStore store((root_ / "code").string());
  const std::string archive = ArchiveBuilder().file("train.py", "print(1)\n").end();
  const std::string sha = sha256_of(archive);
  auto kept = store.store(sha, archive, "alice");
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(*kept, static_cast<std::int64_t>(archive.size()));
  EXPECT_EQ(store.archive_path(sha), (root_ / "code" / (sha + ".tar")).string());
  struct stat st {};
  ASSERT_EQ(::stat(store.archive_path(sha).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  ASSERT_EQ(::stat((root_ / "code").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700U);
  EXPECT_THAT(store.uploaders(sha), ElementsAre("alice"));
  EXPECT_EQ(*store.find(sha, "alice"), static_cast<std::int64_t>(archive.size()));
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "code"), fs::directory_iterator()), 2);
}

TEST_F(CodeStoreTest, AnotherUserSeesNothingUntilTheyUploadTheSameBytes) {
  CodeStore store((root_ / "code").string());
  const std::string archive = ArchiveBuilder().file("train.py", "x").end();
  const std::string sha = sha256_of(archive);
  ASSERT_TRUE(store.store(sha, archive, "alice").ok());
  auto bob = store.find(sha, "bob");
  ASSERT_FALSE(bob.ok());
  EXPECT_EQ(bob.error().kind, ErrorKind::not_found);
  ASSERT_TRUE(store.store(sha, archive, "bob").ok());
  ASSERT_TRUE(store.store(sha, archive, "bob").ok());
  EXPECT_THAT(store.uploaders(sha), ElementsAre("alice", "bob"));
  EXPECT_TRUE(store.find(sha, "bob").ok());
}

TEST_F(CodeStoreTest, AWrongHashOrABadArchiveIsNeverWritten) {
  CodeStore store((root_ / "code").string());
  const std::string archive = ArchiveBuilder().file("a", "x").end();
  const std::string other(64, 'a');
  auto wrong = store.store(other, archive, "alice");
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().message, HasSubstr("SHA-256 is " + sha256_of(archive)));
  const std::string evil = ArchiveBuilder().file("../x", "x").end();
  auto refused = store.store(sha256_of(evil), evil, "alice");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("refused archive"));
  EXPECT_FALSE(store.store("../../etc/passwd", archive, "alice").ok());
  EXPECT_FALSE(store.store(sha256_of(archive), archive, "a\nb").ok());
  EXPECT_FALSE(fs::exists(store.archive_path(sha256_of(evil))));
  EXPECT_FALSE(store.find("../x", "alice").ok());
}

TEST_F(CodeStoreTest, AnArchiveOverTheLimitIsRefused) {
  CodeStore store((root_ / "code").string(), ArchiveLimits{4096, 10});
  const std::string archive = ArchiveBuilder().file("a", std::string(5000, 'x')).end();
  auto r = store.store(sha256_of(archive), archive, "alice");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("over the limit of 4096"));
}

}  // namespace
}  // namespace orch
