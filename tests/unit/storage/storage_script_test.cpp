// The storage scripts (adapters/storage/storage_script.h) through the real /bin/sh on temporary
// trees: nested directories, hostile file names, empty files, a single file, a missing path,
// the three hash modes, symbolic links and FIFOs skipped, the deletion script's refusals; and
// the parser on outputs no shell would give (a failure, a cut-short listing, a chatty profile).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "adapters/ssh/shell_quote.h"
#include "adapters/storage/local_storage.h"
#include "adapters/storage/storage_script.h"

namespace orch::storage {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kShaAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const std::string kShaEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const std::string kShaHello = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

// Names no shell word or line-based listing survives.
const std::string kSpaces = "with  two spaces.bin";
const std::string kNewline = "new\nline";
const std::string kQuotes = "it's \"quoted\" $(touch PWNED) `x` *";
const std::string kDash = "-rf";
const std::string kBackslash = "back\\slash\\n";
const std::string kLatin1 = std::string("caf\xe9");  // not UTF-8

class StorageScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "orch-storage-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  void write(const std::string& rel, const std::string& content) {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }

  // A checkpoint-like tree with every kind of hostile name, nested.
  std::string make_tree() {
    const std::string dir = root_ + "/ckpt";
    write("ckpt/model.bin", "abc");
    write("ckpt/empty", "");
    write("ckpt/a/b/c/deep.txt", "hello\n");
    write("ckpt/" + kSpaces, "abc");
    write("ckpt/sub dir/" + kNewline, "hello\n");
    write("ckpt/" + kQuotes, "");
    write("ckpt/" + kDash, "abc");
    write("ckpt/" + kBackslash, "abc");
    write("ckpt/" + kLatin1, "hello\n");
    fs::create_directories(dir + "/empty dir/nested");
    return dir;
  }

  static ManifestRequest request(const std::string& path,
                                 ManifestRequest::Hash hash = ManifestRequest::Hash::all,
                                 std::vector<std::string> names = {}) {
    ManifestRequest r;
    r.path = path;
    r.hash = hash;
    r.hash_files = std::move(names);
    return r;
  }

  static Manifest list_ok(const ManifestRequest& r) {
    auto m = local_manifest(r);
    EXPECT_TRUE(m.ok()) << m.error().message;
    return m.ok() ? *m : Manifest{};
  }

  static std::map<std::string, ManifestFile> by_path(const Manifest& m) {
    std::map<std::string, ManifestFile> out;
    for (const ManifestFile& f : m.files) EXPECT_TRUE(out.emplace(f.path, f).second) << f.path;
    return out;
  }

  std::string root_;
};

TEST_F(StorageScriptTest, DirectoryListsEveryRegularFileWithSizeAndHashSortedByPath) {
  const std::string dir = make_tree();
  Manifest m = list_ok(request(dir));
  EXPECT_TRUE(m.directory);
  std::vector<std::string> paths;
  for (const ManifestFile& f : m.files) paths.push_back(f.path);
  std::vector<std::string> expected = {
      "model.bin", "empty", "a/b/c/deep.txt", kSpaces, "sub dir/" + kNewline,
      kQuotes,     kDash,   kBackslash,       kLatin1};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(paths, expected);  // sorted bytewise, no directories, nothing else

  auto files = by_path(m);
  EXPECT_EQ(files["model.bin"].size, 3u);
  EXPECT_EQ(files["model.bin"].sha256, kShaAbc);  // sha256("abc"), the FIPS 180-2 example
  EXPECT_EQ(files["empty"].size, 0u);
  EXPECT_EQ(files["empty"].sha256, kShaEmpty);
  EXPECT_EQ(files["a/b/c/deep.txt"].size, 6u);
  EXPECT_EQ(files["a/b/c/deep.txt"].sha256, kShaHello);
  EXPECT_EQ(files[kSpaces].sha256, kShaAbc);
  EXPECT_EQ(files["sub dir/" + kNewline].sha256, kShaHello);
  EXPECT_EQ(files[kQuotes].sha256, kShaEmpty);
  EXPECT_EQ(files[kDash].sha256, kShaAbc);
  EXPECT_EQ(files[kBackslash].sha256, kShaAbc);
  EXPECT_EQ(files[kLatin1].sha256, kShaHello);
  EXPECT_FALSE(fs::exists(dir + "/PWNED"));
  EXPECT_FALSE(fs::exists("PWNED"));
}

// Over SSH the script runs in the remote user's login shell, often bash: same listing.
TEST_F(StorageScriptTest, BashReadsTheScriptAsShDoes) {
  if (!fs::exists("/bin/bash")) GTEST_SKIP() << "no /bin/bash";
  const std::string dir = make_tree();
  Manifest via_sh = list_ok(request(dir));
  auto script = manifest_script(request(dir));
  ASSERT_TRUE(script.ok());
  auto quoted = shell_quote(*script);
  ASSERT_TRUE(quoted.ok());
  auto run = run_shell_script("exec /bin/bash -c " + *quoted, std::chrono::seconds(60));
  ASSERT_TRUE(run.ok()) << run.error().message;
  auto via_bash = parse_manifest_output(run->out, run->err, run->exit_status, dir);
  ASSERT_TRUE(via_bash.ok()) << via_bash.error().message;
  ASSERT_EQ(via_bash->files.size(), via_sh.files.size());
  for (std::size_t i = 0; i < via_sh.files.size(); ++i) {
    EXPECT_EQ(via_bash->files[i].path, via_sh.files[i].path);
    EXPECT_EQ(via_bash->files[i].size, via_sh.files[i].size);
    EXPECT_EQ(via_bash->files[i].sha256, via_sh.files[i].sha256);
  }
  auto missing = run_shell_script(
      "exec /bin/bash -c " + *shell_quote(*manifest_script(request(root_ + "/none"))),
      std::chrono::seconds(60));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(
      parse_manifest_output(missing->out, missing->err, missing->exit_status, "x").error().kind,
      ErrorKind::not_found);
}

TEST_F(StorageScriptTest, AThreeHundredFileTreeHashesEveryFile) {
  for (int i = 0; i < 300; ++i)
    write("many/d" + std::to_string(i % 7) + "/f" + std::to_string(i), "abc");
  Manifest m = list_ok(request(root_ + "/many"));
  ASSERT_EQ(m.files.size(), 300u);
  for (const ManifestFile& f : m.files) EXPECT_EQ(f.sha256, kShaAbc) << f.path;
  EXPECT_TRUE(std::is_sorted(m.files.begin(), m.files.end(),
                             [](const auto& a, const auto& b) { return a.path < b.path; }));
}

TEST_F(StorageScriptTest, TrailingSlashAndARootThatIsALinkAreFollowed) {
  const std::string dir = make_tree();
  Manifest plain = list_ok(request(dir, ManifestRequest::Hash::none));
  Manifest slash = list_ok(request(dir + "/", ManifestRequest::Hash::none));
  ASSERT_EQ(slash.files.size(), plain.files.size());
  fs::create_directory_symlink(dir, root_ + "/latest");
  Manifest linked = list_ok(request(root_ + "/latest"));
  EXPECT_TRUE(linked.directory);
  ASSERT_EQ(linked.files.size(), plain.files.size());
  for (std::size_t i = 0; i < plain.files.size(); ++i) {
    EXPECT_EQ(linked.files[i].path, plain.files[i].path);
    EXPECT_EQ(slash.files[i].path, plain.files[i].path);
  }
}

TEST_F(StorageScriptTest, SymlinksAndSpecialFilesInsideTheTreeAreSkipped) {
  write("outside/secret", "abc");
  write("tree/real", "abc");
  fs::create_symlink(root_ + "/outside/secret", root_ + "/tree/link-to-file");
  fs::create_directory_symlink(root_ + "/outside", root_ + "/tree/link-to-dir");
  fs::create_symlink(root_ + "/nowhere", root_ + "/tree/dangling");
  fs::create_symlink("real", root_ + "/tree/relative-link");
  ASSERT_EQ(mkfifo((root_ + "/tree/fifo").c_str(), 0600), 0);
  Manifest m = list_ok(request(root_ + "/tree"));
  ASSERT_EQ(m.files.size(), 1u);
  EXPECT_EQ(m.files[0].path, "real");
  EXPECT_EQ(m.files[0].sha256, kShaAbc);
}

TEST_F(StorageScriptTest, SingleFileHasOneEntryWithAnEmptyPath) {
  write("step-500.ckpt", "abc");
  Manifest m = list_ok(request(root_ + "/step-500.ckpt"));
  EXPECT_FALSE(m.directory);
  ASSERT_EQ(m.files.size(), 1u);
  EXPECT_EQ(m.files[0].path, "");
  EXPECT_EQ(m.files[0].size, 3u);
  EXPECT_EQ(m.files[0].sha256, kShaAbc);

  write(kQuotes + "\n" + kDash, "");  // a hostile name for the file itself
  Manifest e = list_ok(request(root_ + "/" + kQuotes + "\n" + kDash));
  EXPECT_FALSE(e.directory);
  ASSERT_EQ(e.files.size(), 1u);
  EXPECT_EQ(e.files[0].size, 0u);
  EXPECT_EQ(e.files[0].sha256, kShaEmpty);

  fs::create_symlink(root_ + "/step-500.ckpt", root_ + "/latest.ckpt");
  Manifest linked = list_ok(request(root_ + "/latest.ckpt"));
  EXPECT_FALSE(linked.directory);
  ASSERT_EQ(linked.files.size(), 1u);
  EXPECT_EQ(linked.files[0].sha256, kShaAbc);
}

TEST_F(StorageScriptTest, EmptyDirectoryHasNoFiles) {
  fs::create_directories(root_ + "/empty/a/b");
  Manifest m = list_ok(request(root_ + "/empty"));
  EXPECT_TRUE(m.directory);
  EXPECT_TRUE(m.files.empty());
}

TEST_F(StorageScriptTest, MissingPathsAreNotFound) {
  write("file", "abc");
  fs::create_symlink(root_ + "/nowhere", root_ + "/dangling");
  for (const std::string& p : {root_ + "/nothing", root_ + "/nothing/deeper",
                               root_ + "/file/below-a-file", root_ + "/dangling"}) {
    auto m = local_manifest(request(p));
    ASSERT_FALSE(m.ok()) << p;
    EXPECT_EQ(m.error().kind, ErrorKind::not_found) << m.error().message;
    EXPECT_EQ(m.error().message, p + " does not exist at the site");
  }
}

TEST_F(StorageScriptTest, HashNoneListsSizesOnly) {
  const std::string dir = make_tree();
  Manifest m = list_ok(request(dir, ManifestRequest::Hash::none));
  ASSERT_EQ(m.files.size(), 9u);
  for (const ManifestFile& f : m.files) EXPECT_EQ(f.sha256, "") << f.path;
  EXPECT_EQ(by_path(m)["model.bin"].size, 3u);

  write("one", "abc");
  Manifest one = list_ok(request(root_ + "/one", ManifestRequest::Hash::none));
  ASSERT_EQ(one.files.size(), 1u);
  EXPECT_EQ(one.files[0].size, 3u);
  EXPECT_EQ(one.files[0].sha256, "");
}

TEST_F(StorageScriptTest, HashListedHashesOnlyTheNamedFiles) {
  const std::string dir = make_tree();
  fs::create_symlink(dir + "/model.bin", dir + "/alias");
  Manifest m = list_ok(request(dir, ManifestRequest::Hash::listed,
                               {"a/b/c/deep.txt", "sub dir/" + kNewline, kQuotes, kDash,
                                "not-there", "alias", "a/b", "model.bin", "model.bin"}));
  ASSERT_EQ(m.files.size(), 9u);  // every file is listed, with its size
  auto files = by_path(m);
  EXPECT_EQ(files["a/b/c/deep.txt"].sha256, kShaHello);
  EXPECT_EQ(files["sub dir/" + kNewline].sha256, kShaHello);
  EXPECT_EQ(files[kQuotes].sha256, kShaEmpty);
  EXPECT_EQ(files[kDash].sha256, kShaAbc);
  EXPECT_EQ(files["model.bin"].sha256, kShaAbc);
  EXPECT_EQ(files["empty"].sha256, "");
  EXPECT_EQ(files[kSpaces].sha256, "");
  EXPECT_EQ(files[kLatin1].sha256, "");
  EXPECT_EQ(files.count("alias"), 0u);  // a link: neither listed nor hashed

  // Nothing named: a listing without hashes.
  Manifest none = list_ok(request(dir, ManifestRequest::Hash::listed));
  for (const ManifestFile& f : none.files) EXPECT_EQ(f.sha256, "") << f.path;

  // A single file is named "".
  write("one", "abc");
  Manifest named = list_ok(request(root_ + "/one", ManifestRequest::Hash::listed, {""}));
  EXPECT_EQ(named.files.at(0).sha256, kShaAbc);
  Manifest other = list_ok(request(root_ + "/one", ManifestRequest::Hash::listed, {"x"}));
  EXPECT_EQ(other.files.at(0).sha256, "");
}

TEST_F(StorageScriptTest, RequestsThatCannotBeScriptedAreInvalid) {
  for (const std::string& bad :
       {std::string("/etc/passwd"), std::string("../up"), std::string("a/../../x"),
        std::string("./a"), std::string("a//"), std::string("a/./b")}) {
    auto s = manifest_script(request("/data", ManifestRequest::Hash::listed, {bad}));
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().kind, ErrorKind::invalid) << bad;
  }
  EXPECT_EQ(manifest_script(request("")).error().kind, ErrorKind::invalid);
  EXPECT_EQ(manifest_script(request(std::string("/a\0b", 4))).error().kind, ErrorKind::invalid);
  std::vector<std::string> many;
  for (int i = 0; i < 5000; ++i) many.push_back("shard-" + std::to_string(i) + ".bin");
  auto s = manifest_script(request("/data", ManifestRequest::Hash::listed, many));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("too many files"));
}

// The parser on outputs only a broken site gives.
TEST(ParseManifestOutput, FailuresAndDamagedOutputsAreIoWithStderr) {
  using std::string_literals::operator""s;
  auto failed = parse_manifest_output("orchestrate-manifest-v1\0dir\0"s,
                                      "find: './x': Permission denied\n", 1, "/ck");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::io);
  EXPECT_THAT(failed.error().message, HasSubstr("cannot list /ck"));
  EXPECT_THAT(failed.error().message, HasSubstr("Permission denied"));
  EXPECT_THAT(failed.error().message, HasSubstr("exit status 1"));

  auto cut = parse_manifest_output("orchestrate-manifest-v1\0dir\0003 a\0hashes\0"s, "", 0, "/ck");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().kind, ErrorKind::io);
  EXPECT_THAT(cut.error().message, HasSubstr("cut short"));

  auto nothing = parse_manifest_output("", "sh: 1: sha256sum: not found\n", 127, "/ck");
  ASSERT_FALSE(nothing.ok());
  EXPECT_THAT(nothing.error().message, HasSubstr("sha256sum: not found"));

  auto garbled =
      parse_manifest_output("orchestrate-manifest-v1\0dir\0x a\0hashes\0end\0"s, "", 0, "/ck");
  ASSERT_FALSE(garbled.ok());
  EXPECT_EQ(garbled.error().kind, ErrorKind::io);

  auto bad_hash = parse_manifest_output(
      "orchestrate-manifest-v1\0dir\0003 a\0hashes\0XYZ  ./a\0end\0"s, "", 0, "/ck");
  ASSERT_FALSE(bad_hash.ok());
  EXPECT_EQ(bad_hash.error().kind, ErrorKind::io);
}

TEST(ParseManifestOutput, WhatALoginProfilePrintsFirstIsSkipped) {
  using std::string_literals::operator""s;
  auto m = parse_manifest_output(
      "Welcome to the cluster!\norchestrate-manifest-v1\0dir\0"
      "3 b\0003 a\0hashes\0"s +
          kShaAbc + "  ./a\0"s + kShaAbc + "  ./unlisted\0end\0"s,
      "", 0, "/ck");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->files.size(), 2u);
  EXPECT_EQ(m->files[0].path, "a");  // sorted
  EXPECT_EQ(m->files[0].sha256, kShaAbc);
  EXPECT_EQ(m->files[1].path, "b");
  EXPECT_EQ(m->files[1].sha256, "");  // not hashed; the unlisted hash is dropped
}

TEST_F(StorageScriptTest, RemoveRefusesRelativePathsAndWhatLiesOutsideItsDirectory) {
  for (const std::string& bad :
       {std::string(""), std::string("relative/dir"), std::string("."), std::string("/a\0b", 4)}) {
    auto s = remove_script({bad, root_});
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().kind, ErrorKind::invalid) << bad;
    auto r = local_remove({bad, root_});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid) << bad;
  }
  // The root, the directory itself (however written) and anything beside it: forbidden.
  for (const std::string& outside :
       {std::string("/"), std::string("//"), std::string("/a/.."), std::string("/tmp/."), root_,
        root_ + "/", root_ + "/.", root_ + "/x/..", root_ + "/../elsewhere", root_ + "-sibling"}) {
    auto s = remove_script({outside, root_});
    ASSERT_FALSE(s.ok()) << outside;
    EXPECT_EQ(s.error().kind, ErrorKind::forbidden) << outside;
    EXPECT_THAT(s.error().message, HasSubstr("nothing was deleted")) << outside;
  }
  // A directory to confine it is required, and must be one.
  for (const std::string& within : {std::string(""), std::string("/"), std::string("rel")}) {
    auto s = remove_script({root_ + "/x", within});
    ASSERT_FALSE(s.ok()) << within;
    EXPECT_EQ(s.error().kind, ErrorKind::invalid) << within;
  }
  EXPECT_TRUE(fs::exists(root_));
}

TEST_F(StorageScriptTest, RemoveDeletesTreesAndFilesAndAMissingPathIsFine) {
  const std::string dir = make_tree();
  ASSERT_TRUE(local_remove({dir, root_}).ok());
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(fs::exists(root_));

  write(kQuotes, "abc");
  ASSERT_TRUE(local_remove({root_ + "/" + kQuotes, root_}).ok());
  EXPECT_FALSE(fs::exists(root_ + "/" + kQuotes));
  EXPECT_FALSE(fs::exists("PWNED"));

  write("-rf dir/x", "abc");
  ASSERT_TRUE(local_remove({root_ + "//-rf dir///", root_}).ok());  // normalised
  EXPECT_FALSE(fs::exists(root_ + "/-rf dir"));

  write("a/b/../c/x", "abc");
  ASSERT_TRUE(local_remove({root_ + "/a/b/../c", root_}).ok());  // ".." resolved first
  EXPECT_FALSE(fs::exists(root_ + "/a/c"));
  EXPECT_TRUE(fs::exists(root_ + "/a/b"));

  auto missing = local_remove({root_ + "/never/was", root_});
  EXPECT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_TRUE(fs::exists(root_));
}

TEST_F(StorageScriptTest, RemovingALinkInsideRemovesTheLinkNotItsTarget) {
  write("target/keep", "abc");
  fs::create_directory_symlink(root_ + "/target", root_ + "/link");
  ASSERT_TRUE(local_remove({root_ + "/link/", root_}).ok());  // even with a trailing slash
  EXPECT_FALSE(fs::is_symlink(root_ + "/link"));
  EXPECT_TRUE(fs::exists(root_ + "/target/keep"));
}

TEST(RunShellScript, DeadlineKillsTheScriptAndEverythingItStarted) {
  auto started = std::chrono::steady_clock::now();
  auto r = run_shell_script("sleep 30 & sleep 30", std::chrono::milliseconds(300));
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::io);
  EXPECT_THAT(r.error().message, HasSubstr("deadline"));
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(RunShellScript, ExitStatusOutputAndTheOutputCap) {
  auto r = run_shell_script("printf 'a\\0b'; echo oops >&2; exit 3", std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_status, 3);
  EXPECT_EQ(r->out, std::string("a\0b", 3));
  EXPECT_EQ(r->err, "oops\n");

  auto big = run_shell_script("yes", std::chrono::seconds(10), 1 << 16);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().kind, ErrorKind::io);

  auto killed = run_shell_script("kill -9 $$", std::chrono::seconds(10));
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->exit_status, -1);
  EXPECT_THAT(killed->err, HasSubstr("signal 9"));
}

}  // namespace
}  // namespace orch::storage
