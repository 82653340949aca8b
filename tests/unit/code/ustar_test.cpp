// ustar headers (scheduler/common/ustar.h): what the packer writes reads back, GNU tar
// extracts it as written (modes, symlinks, long names), and the name and symlink rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "scheduler/common/ustar.h"
#include "tests/unit/code/archive_builder.h"

namespace orch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_archive::ArchiveBuilder;

TEST(Ustar, AHeaderReadsBackAsWritten) {
  auto h = ustar::header({"pkg/train.py", ustar::Kind::file, 0755, 1234, ""});
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_EQ(h->size(), 512U);
  auto m = ustar::parse_header(*h);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->name, "pkg/train.py");
  EXPECT_EQ(m->kind, ustar::Kind::file);
  EXPECT_EQ(m->mode, 0755U);
  EXPECT_EQ(m->size, 1234U);
}

TEST(Ustar, ALongNameIsSplitIntoPrefixAndName) {
  const std::string name = std::string(120, 'd') + "/" + std::string(90, 'f');
  auto h = ustar::header({name, ustar::Kind::file, 0644, 0, ""});
  ASSERT_TRUE(h.ok()) << h.error().message;
  auto m = ustar::parse_header(*h);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->name, name);
  auto too_long = ustar::header({std::string(150, 'x'), ustar::Kind::file, 0644, 0, ""});
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(too_long.error().message, HasSubstr("too long"));
}

TEST(Ustar, TheSameMemberAlwaysGivesTheSameBytes) {
  const ustar::Member m{"a/b", ustar::Kind::directory, 0700, 0, ""};
  EXPECT_EQ(*ustar::header(m), *ustar::header(m));
}

TEST(Ustar, GnuTarExtractsWhatIsWritten) {
  const fs::path dir = fs::temp_directory_path() / ("ustar_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "out");
  const std::string long_dir = std::string(60, 'd') + "/" + std::string(60, 'e');
  const std::string archive = ArchiveBuilder()
                                  .dir("pkg")
                                  .file("pkg/run.sh", "#!/bin/sh\necho hi\n", 0755)
                                  .symlink("run", "pkg/run.sh")
                                  .dir(long_dir.substr(0, 60))
                                  .dir(long_dir)
                                  .file(long_dir + "/data.txt", "x")
                                  .end();
  std::ofstream(dir / "a.tar", std::ios::binary) << archive;
  const std::string cmd = "tar -xf " + (dir / "a.tar").string() + " -C " + (dir / "out").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "out/pkg/run.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  EXPECT_EQ(fs::read_symlink(dir / "out/run"), "pkg/run.sh");
  EXPECT_TRUE(fs::exists(dir / "out" / long_dir / "data.txt"));
  fs::remove_all(dir);
}

TEST(Ustar, MemberNamesMustBeNormalAndRelative) {
  EXPECT_TRUE(ustar::check_member_name("pkg/a.py").ok());
  for (const char* bad : {"/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/.", "", "a\nb"}) {
    EXPECT_FALSE(ustar::check_member_name(bad).ok()) << bad;
  }
}

TEST(Ustar, SymlinksMustStayInsideTheTree) {
  EXPECT_TRUE(ustar::check_symlink_target("run", "pkg/run.sh").ok());
  EXPECT_TRUE(ustar::check_symlink_target("pkg/sub/link", "../../data").ok());
  EXPECT_TRUE(ustar::check_symlink_target("pkg/link", "../data/").ok());
  auto out = ustar::check_symlink_target("pkg/link", "../../etc");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.error().message, HasSubstr("points out of the tree"));
  EXPECT_FALSE(ustar::check_symlink_target("link", "/etc/passwd").ok());
  EXPECT_FALSE(ustar::check_symlink_target("link", "pkg/../../x").ok());
  EXPECT_FALSE(ustar::check_symlink_target("link", "").ok());
}

TEST(Ustar, SpecialTypesAreRefusedByName) {
  auto parse_type = [](char type) {
    std::string block = *ustar::header({"x", ustar::Kind::file, 0644, 0, ""});
    block[156] = type;
    ArchiveBuilder::reseal(block);
    return ustar::parse_header(block);
  };
  EXPECT_THAT(parse_type('1').error().message, HasSubstr("hard link"));
  EXPECT_THAT(parse_type('3').error().message, HasSubstr("device"));
  EXPECT_THAT(parse_type('6').error().message, HasSubstr("fifo"));
  EXPECT_THAT(parse_type('x').error().message, HasSubstr("extension header"));
  std::string corrupt = *ustar::header({"x", ustar::Kind::file, 0644, 0, ""});
  corrupt[0] = 'y';
  EXPECT_THAT(ustar::parse_header(corrupt).error().message, HasSubstr("checksum"));
}

}  // namespace
}  // namespace orch
