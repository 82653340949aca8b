// Manifests (scheduler/model/manifest.h): JSON form and how a site's copy is compared with the
// registered one.
#include "scheduler/model/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace orch {
namespace {

using ::testing::HasSubstr;

const std::string kHashA = std::string(64, 'a');
const std::string kHashB = "9f8e7d6c5b4a" + std::string(52, '0');

ManifestFile file(std::string path, std::uint64_t size, std::string sha = "") {
  return ManifestFile{std::move(path), size, std::move(sha)};
}

Manifest dir(std::vector<ManifestFile> files) {
  return Manifest{true, std::move(files)};
}
Manifest one_file(std::uint64_t size, std::string sha = "") {
  return Manifest{false, {file("", size, std::move(sha))}};
}

// The registered checkpoint: three hashed files.
Manifest registered() {
  return dir({file("model.bin", 2048, kHashA), file("opt.pt", 100, kHashA),
              file("shard-1.bin", 2048, kHashA)});
}

TEST(Manifest, TotalBytesAddsEveryFile) {
  EXPECT_EQ(registered().total_bytes(), 4196u);
  EXPECT_EQ(Manifest{}.total_bytes(), 0u);
}

// --- compare_manifest -----------------------------------------------------------------------

TEST(CompareManifest, SameFilesSameSizesSameHashesMatch) {
  ManifestDiff d = compare_manifest(registered(), registered());
  EXPECT_TRUE(d.matches);
  EXPECT_EQ(d.differences, 0);
  EXPECT_EQ(d.difference, "");
}

TEST(CompareManifest, SizeDifference) {
  Manifest seen = registered();
  seen.files[2].size = 1024;
  ManifestDiff d = compare_manifest(registered(), seen);
  EXPECT_FALSE(d.matches);
  EXPECT_EQ(d.difference, "file shard-1.bin: size 1024, expected 2048");
  EXPECT_EQ(d.differences, 1);
}

TEST(CompareManifest, HashDifferenceShowsTwelveHexDigits) {
  Manifest seen = registered();
  seen.files[1].sha256 = kHashB;
  ManifestDiff d = compare_manifest(registered(), seen);
  EXPECT_FALSE(d.matches);
  EXPECT_EQ(d.difference, "file opt.pt: SHA-256 9f8e7d6c5b4a\u2026, expected aaaaaaaaaaaa\u2026");
}

TEST(CompareManifest, MissingFile) {
  Manifest seen = registered();
  seen.files.erase(seen.files.begin());
  EXPECT_EQ(compare_manifest(registered(), seen).difference, "file model.bin is missing");
}

TEST(CompareManifest, UnexpectedFile) {
  Manifest seen = registered();
  seen.files.push_back(file("x.tmp", 1));
  EXPECT_EQ(compare_manifest(registered(), seen).difference, "unexpected file x.tmp");
}

TEST(CompareManifest, FileWhereADirectoryWasExpectedAndTheOtherWayRound) {
  EXPECT_EQ(compare_manifest(registered(), one_file(4196)).difference,
            "a file where a directory was expected");
  EXPECT_EQ(compare_manifest(one_file(4196), registered()).difference,
            "a directory where a file was expected");
}

TEST(CompareManifest, OneFileCopyIsNamedAsSuch) {
  EXPECT_EQ(compare_manifest(one_file(10, kHashA), one_file(9)).difference,
            "the file: size 9, expected 10");
  EXPECT_TRUE(compare_manifest(one_file(10, kHashA), one_file(10, kHashA)).matches);
}

TEST(CompareManifest, UnhashedFilesAreComparedBySizeOnly) {
  // An audit hashes a sample: the other files match on size alone.
  Manifest seen = registered();
  for (ManifestFile& f : seen.files) f.sha256.clear();
  seen.files[0].sha256 = kHashA;
  EXPECT_TRUE(compare_manifest(registered(), seen).matches);
  seen.files[0].sha256 = kHashB;
  EXPECT_FALSE(compare_manifest(registered(), seen).matches);
}

TEST(CompareManifest, HashSeenButNotRegisteredCannotDiffer) {
  Manifest unhashed = dir({file("a", 1)});
  EXPECT_TRUE(compare_manifest(unhashed, dir({file("a", 1, kHashB)})).matches);
}

TEST(CompareManifest, CountsEveryDifferenceAndReportsTheFirstByPath) {
  Manifest seen = dir({file("model.bin", 1, kHashA), file("opt.pt", 100, kHashB),
                       file("zzz", 1)});  // shard-1.bin missing
  ManifestDiff d = compare_manifest(registered(), seen);
  EXPECT_EQ(d.differences, 4);
  EXPECT_EQ(d.difference, "file model.bin: size 1, expected 2048");
}

// --- JSON -----------------------------------------------------------------------------------

TEST(ManifestJson, RoundTrips) {
  Manifest m = registered();
  m.files[1].sha256.clear();
  auto back = manifest_from_json(manifest_to_json(m));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->directory, true);
  ASSERT_EQ(back->files.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back->files[i].path, m.files[i].path);
    EXPECT_EQ(back->files[i].size, m.files[i].size);
    EXPECT_EQ(back->files[i].sha256, m.files[i].sha256);
  }
  auto single = manifest_from_json(manifest_to_json(one_file(1ULL << 40, kHashA)));
  ASSERT_TRUE(single.ok()) << single.error().message;
  EXPECT_FALSE(single->directory);
  EXPECT_EQ(single->files.at(0).size, 1ULL << 40);
}

TEST(ManifestJson, ShapeIsDocumented) {
  EXPECT_EQ(manifest_to_json(one_file(5, kHashA)).dump(),
            R"({"directory":false,"files":[{"path":"","sha256":")" + kHashA + R"(","size":5}]})");
}

TEST(ManifestJson, FilesAreSortedAndShaMayBeAbsent) {
  auto m = manifest_from_json(nlohmann::json::parse(
      R"({"directory": true, "files": [{"path": "b", "size": 1}, {"path": "a/x", "size": 2}]})"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->files[0].path, "a/x");
  EXPECT_EQ(m->files[1].path, "b");
  EXPECT_EQ(m->files[1].sha256, "");
}

struct BadManifest {
  const char* json;
  const char* message;
};

class ManifestFromJson : public ::testing::TestWithParam<BadManifest> {};

TEST_P(ManifestFromJson, RefusesWithTheFieldNamed) {
  auto r = manifest_from_json(nlohmann::json::parse(GetParam().json));
  ASSERT_FALSE(r.ok()) << GetParam().json;
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, ManifestFromJson,
    ::testing::Values(
        BadManifest{"[]", "manifest: expected a JSON object, got array"},
        BadManifest{R"({"directory": true})", "manifest field \"files\": missing"},
        BadManifest{R"({"directory": "yes", "files": []})",
                    "manifest field \"directory\": expected true or false, got \"yes\""},
        BadManifest{R"({"directory": true, "files": {}})",
                    "manifest field \"files\": expected a list"},
        BadManifest{R"({"directory": true, "files": [], "extra": 1})",
                    "manifest field \"extra\": unknown field"},
        BadManifest{R"({"directory": true, "files": [7]})",
                    "manifest field \"files[0]\": expected an object, got 7"},
        BadManifest{R"({"directory": true, "files": [{"size": 1}]})",
                    "manifest field \"files[0].path\": missing"},
        BadManifest{R"({"directory": true, "files": [{"path": "/etc/passwd", "size": 1}]})",
                    "manifest field \"files[0].path\": expected a relative path"},
        BadManifest{R"({"directory": true, "files": [{"path": "a/../b", "size": 1}]})",
                    "manifest field \"files[0].path\": expected a relative path"},
        BadManifest{R"({"directory": true, "files": [{"path": "a", "size": -1}]})",
                    "manifest field \"files[0].size\": expected a byte count >= 0, got -1"},
        BadManifest{R"({"directory": true, "files": [{"path": "a", "size": 1.5}]})",
                    "manifest field \"files[0].size\": expected a byte count >= 0"},
        BadManifest{R"({"directory": true, "files": [{"path": "a"}]})",
                    "manifest field \"files[0].size\": missing"},
        BadManifest{R"({"directory": true, "files": [{"path": "a", "size": 1, "sha256": "ABC"}]})",
                    "manifest field \"files[0].sha256\": expected 64 lowercase hex digits"},
        BadManifest{R"({"directory": true, "files": [{"path": "a", "size": 1, "md5": ""}]})",
                    "manifest field \"files[0].md5\": unknown field"},
        BadManifest{R"({"directory": true, "files": [{"path": "a", "size": 1},
                                                     {"path": "a", "size": 2}]})",
                    "manifest field \"files\": \"a\" is listed twice"},
        BadManifest{R"({"directory": false, "files": [{"path": "a", "size": 1}]})",
                    "manifest field \"files[0].path\": must be \"\" in a manifest of one file"},
        BadManifest{R"({"directory": false, "files": []})",
                    "manifest field \"files\": a manifest of one file lists exactly one, got 0"}));

}  // namespace
}  // namespace orch
