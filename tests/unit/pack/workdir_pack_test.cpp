// Packing a job's workdir (cli/workdir_pack.h) on real temporary trees.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "adapters/code/code_store.h"
#include "cli/workdir_pack.h"
#include "cli/workdir_upload.h"

namespace orch {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class WorkdirPack : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("workdir_pack_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "tree");
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& rel, const std::string& text) {
    const fs::path p = tree() / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  fs::path tree() const { return root_ / "tree"; }
  std::string tree_s() const { return tree().string(); }

  // The names in the archive, as GNU tar lists them.
  std::vector<std::string> listed(const PackedWorkdir& packed) {
    const fs::path tar = root_ / "a.tar";
    std::ofstream(tar, std::ios::binary) << packed.archive;
    const fs::path list = root_ / "list.txt";
    const std::string cmd = "tar -tf " + tar.string() + " > " + list.string();
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    std::ifstream in(list);
    std::vector<std::string> names;
    for (std::string line; std::getline(in, line);) names.push_back(line);
    return names;
  }

  fs::path root_;
};

TEST_F(WorkdirPack, ATreeIsPackedInNameOrderWithGitLeftOut) {
  write("pkg/train.py", "print('hi')\n");
  write("pkg/__init__.py", "");
  write("README", "r");
  write(".git/HEAD", "ref: refs/heads/main\n");
  auto packed = pack_workdir(tree_s());
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  EXPECT_THAT(listed(*packed), ElementsAre("README", "pkg/", "pkg/__init__.py", "pkg/train.py"));
  EXPECT_EQ(packed->files, 3U);
  EXPECT_TRUE(check_workdir_archive(packed->archive).ok());
  EXPECT_EQ(packed->sha256, sha256_of(packed->archive));
}

TEST_F(WorkdirPack, GitignoreAndOrchignoreAreHonoured) {
  write(".gitignore", "*.pyc\n/data/\n.venv/\n");
  write(".orchignore", "notes.txt\n!keep.pyc\n");
  write("a.py", "1");
  write("a.pyc", "x");
  write("keep.pyc", "x");
  write("notes.txt", "n");
  write("data/big.bin", "b");
  write(".venv/bin/python", "p");
  write("pkg/.gitignore", "local.cfg\n");
  write("pkg/local.cfg", "secret");
  write("pkg/m.py", "m");
  auto packed = pack_workdir(tree_s());
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  EXPECT_THAT(listed(*packed), ElementsAre(".gitignore", ".orchignore", "a.py", "keep.pyc", "pkg/",
                                           "pkg/.gitignore", "pkg/m.py"));
}

TEST_F(WorkdirPack, TheSameTreeGivesTheSameHashAndOneChangedFileAnother) {
  write("pkg/train.py", "print(1)\n");
  write("run.sh", "#!/bin/sh\n");
  fs::permissions(tree() / "run.sh", fs::perms::owner_exec, fs::perm_options::add);
  auto first = pack_workdir(tree_s());
  ASSERT_TRUE(first.ok());
  // Times and the owner's other mode bits do not change the archive.
  fs::last_write_time(tree() / "pkg/train.py",
                      fs::file_time_type::clock::now() - std::chrono::hours(5));
  fs::permissions(tree() / "pkg/train.py", fs::perms::group_write, fs::perm_options::add);
  auto again = pack_workdir(tree_s());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->sha256, first->sha256);
  write("pkg/train.py", "print(2)\n");
  auto changed = pack_workdir(tree_s());
  ASSERT_TRUE(changed.ok());
  EXPECT_NE(changed->sha256, first->sha256);
  // The executable bit is kept.
  const fs::path out = root_ / "out";
  fs::create_directories(out);
  std::ofstream(root_ / "a.tar", std::ios::binary) << changed->archive;
  ASSERT_EQ(std::system(("tar -xf " + (root_ / "a.tar").string() + " -C " + out.string()).c_str()),
            0);
  EXPECT_NE(fs::status(out / "run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
}

TEST_F(WorkdirPack, OverTheLimitIsRefusedNamingTheLargestEntries) {
  write("small.py", "x");
  write("data/a.bin", std::string(3000, 'a'));
  write("data/b.bin", std::string(2000, 'b'));
  write("weights.pt", std::string(4000, 'w'));
  auto packed = pack_workdir(tree_s(), 4096);
  ASSERT_FALSE(packed.ok());
  const std::string& m = packed.error().message;
  EXPECT_THAT(m, HasSubstr("holds 8.8 KiB of files, over the limit of 4.0 KiB"));
  EXPECT_THAT(m, HasSubstr("the largest: data/ (4.9 KiB), weights.pt (3.9 KiB), data/a.bin"));
  EXPECT_THAT(m, HasSubstr(".orchignore"));
}

TEST_F(WorkdirPack, ASparseTenGibFileIsRefusedWithoutReadingIt) {
  write("a.py", "1");
  {
    const int fd = ::open((tree() / "huge.img").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, 10LL << 30), 0);
    ::close(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  auto packed = pack_workdir(tree_s());
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(packed.ok());
  EXPECT_THAT(packed.error().message, HasSubstr("huge.img (10.0 GiB)"));
  EXPECT_LT(took, std::chrono::seconds(2));  // reading 10 GiB of zeros would take far longer
}

TEST_F(WorkdirPack, ASymlinkOutOfTheTreeIsRefusedAndNeverFollowed) {
  write("a.py", "1");
  fs::create_symlink("/etc", tree() / "etc");
  auto packed = pack_workdir(tree_s());
  ASSERT_FALSE(packed.ok());
  EXPECT_THAT(packed.error().message, HasSubstr("the symlink \"etc\" -> \"/etc\" points out"));
  EXPECT_THAT(packed.error().message, HasSubstr(".orchignore"));
  fs::remove(tree() / "etc");
  fs::create_directories(tree() / "pkg");
  fs::create_symlink("../../secret", tree() / "pkg/up");
  EXPECT_FALSE(pack_workdir(tree_s()).ok());
  fs::remove(tree() / "pkg/up");
  // Left out by .orchignore, it is never looked at.
  fs::create_symlink("/etc", tree() / "etc");
  write(".orchignore", "/etc\n");
  EXPECT_TRUE(pack_workdir(tree_s()).ok());
}

TEST_F(WorkdirPack, ASymlinkInsideIsKeptAsALink) {
  write("pkg/real.py", "1");
  fs::create_symlink("pkg/real.py", tree() / "alias.py");
  fs::create_symlink("..", tree() / "pkg/root");
  auto packed = pack_workdir(tree_s());
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  EXPECT_THAT(listed(*packed), ElementsAre("alias.py", "pkg/", "pkg/real.py", "pkg/root"));
  EXPECT_TRUE(check_workdir_archive(packed->archive).ok());
}

TEST_F(WorkdirPack, SpecialFilesAreLeftOutAndListed) {
  write("a.py", "1");
  ASSERT_EQ(::mkfifo((tree() / "pipe").c_str(), 0600), 0);
  auto packed = pack_workdir(tree_s());
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  EXPECT_THAT(packed->skipped, ElementsAre("pipe (fifo)"));
  EXPECT_THAT(listed(*packed), ElementsAre("a.py"));
}

TEST_F(WorkdirPack, NoMemberCanClimbOutOfTheArchive) {
  // Names come from directory listings, never from text: "..", "/" and empty names cannot
  // occur, and a name holding a newline is refused rather than packed.
  write("ok.py", "1");
  write("bad\nname", "x");
  auto packed = pack_workdir(tree_s());
  ASSERT_FALSE(packed.ok());
  EXPECT_THAT(packed.error().message, HasSubstr("control character"));
}

TEST_F(WorkdirPack, AMissingDirectoryIsNamed) {
  auto packed = pack_workdir((root_ / "nope").string());
  ASSERT_FALSE(packed.ok());
  EXPECT_THAT(packed.error().message, HasSubstr("nope is not a directory (it does not exist)"));
}

TEST(WorkdirPath, ARelativeWorkdirIsTheSpecFilesNeighbour) {
  EXPECT_EQ(resolve_workdir("jobs/train.yaml", "./src"), "jobs/src");
  EXPECT_EQ(resolve_workdir("train.yaml", "."), ".");
  EXPECT_EQ(resolve_workdir("/x/train.yaml", "../code/"), "/code");
  EXPECT_EQ(resolve_workdir("/x/train.yaml", "/abs/dir"), "/abs/dir");
}

TEST(WorkdirSize, SizesReadAsFlagsTakeThem) {
  EXPECT_EQ(parse_size("1048576"), 1048576U);
  EXPECT_EQ(parse_size("512MiB"), 512ULL << 20);
  EXPECT_EQ(parse_size("2G"), 2ULL << 30);
  EXPECT_EQ(parse_size("10KiB"), 10ULL << 10);
  EXPECT_FALSE(parse_size("0"));
  EXPECT_FALSE(parse_size("1.5G"));
  EXPECT_FALSE(parse_size("lots"));
  EXPECT_EQ(human_bytes(256ULL << 20), "256.0 MiB");
}

}  // namespace
}  // namespace orch
