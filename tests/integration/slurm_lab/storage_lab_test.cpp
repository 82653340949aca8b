// SlurmSite::manifest and SlurmSite::remove_path on a real lab cluster (label slurm): the
// storage scripts of adapters/storage run on alpha's login node over SSH (the lab's sshd, the
// root user's login shell), on a tree in alpha's storage root. The manifest equals what
// sha256sum gives here; a missing path is not_found; remove_path deletes; a stopped login node
// answers unreachable within seconds. One lab for the whole suite; each test leaves it healthy.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/slurm/slurm_site.h"
#include "testkit/slurm_lab.h"
#include "tests/integration/slurm_lab/site_run.h"

namespace orch::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;

const std::string kShaAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

class StorageLabTest : public LabPerSuiteTest<1> {
 protected:
  void SetUp() override {
    LabPerSuiteTest::SetUp();
    if (HasFatalFailure()) return;
    storage_ = lab_->cluster("alpha").storage_root;
    site_ = make_site();
  }

  static std::unique_ptr<SlurmSite> make_site() {
    ClusterSpec spec = lab_->cluster_spec("alpha");
    spec.ssh.connect_timeout_s = 5;
    spec.ssh.command_timeout_s = 30;
    return std::make_unique<SlurmSite>(spec, std::make_unique<SshSession>(spec.name, spec.ssh));
  }

  void write(const std::string& rel, const std::string& content) {
    fs::path p = fs::path(storage_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }

  static std::string random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(gen() & 0xff);
    return s;
  }

  // A checkpoint directory: nested shards of random bytes, an empty file, hostile names, and a
  // link that must not be listed.
  std::string make_checkpoint(const std::string& name) {
    const std::string rel = "ckpt/" + name;
    write(rel + "/model.bin", random_bytes(3 << 20, 1));
    write(rel + "/optimizer/shard 0.pt", random_bytes(1 << 20, 2));
    write(rel + "/optimizer/shard\n1 'x' $(touch PWNED).pt", random_bytes(12345, 3));
    write(rel + "/meta/empty", "");
    write(rel + "/abc", "abc");
    fs::create_symlink(storage_ + "/" + rel + "/model.bin", storage_ + "/" + rel + "/latest");
    return storage_ + "/" + rel;
  }

  // What sha256sum says here for every regular file under dir (the lab's storage is this
  // machine's filesystem), by relative path, with sizes.
  static Manifest local_truth(const std::string& dir) {
    Manifest m;
    m.directory = true;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file() || e.is_symlink()) continue;
      auto r = run_lab_command({"sha256sum", "-z", "--", e.path().string()});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      ManifestFile f;
      f.path = fs::relative(e.path(), dir).generic_string();
      f.size = e.file_size();
      f.sha256 = r.out.substr(0, 64);
      m.files.push_back(f);
    }
    std::sort(m.files.begin(), m.files.end(),
              [](const ManifestFile& a, const ManifestFile& b) { return a.path < b.path; });
    return m;
  }

  static void expect_same(const Manifest& got, const Manifest& want) {
    EXPECT_EQ(got.directory, want.directory);
    ASSERT_EQ(got.files.size(), want.files.size());
    for (std::size_t i = 0; i < got.files.size(); ++i) {
      EXPECT_EQ(got.files[i].path, want.files[i].path);
      EXPECT_EQ(got.files[i].size, want.files[i].size) << want.files[i].path;
      EXPECT_EQ(got.files[i].sha256, want.files[i].sha256) << want.files[i].path;
    }
  }

  static ManifestRequest request(const std::string& path,
                                 ManifestRequest::Hash hash = ManifestRequest::Hash::all) {
    ManifestRequest r;
    r.path = path;
    r.hash = hash;
    return r;
  }

  std::string storage_;
  std::unique_ptr<SlurmSite> site_;
};

TEST_F(StorageLabTest, ManifestOverSshEqualsLocalSha256sum) {
  const std::string dir = make_checkpoint("step-100");
  auto m = site_->manifest(request(dir));
  ASSERT_TRUE(m.ok()) << m.error().message;
  Manifest truth = local_truth(dir);
  ASSERT_EQ(truth.files.size(), 5u);
  expect_same(*m, truth);
  std::uint64_t total = 0;
  for (const ManifestFile& f : m->files) total += f.size;
  EXPECT_EQ(total, (3u << 20) + (1u << 20) + 12345u + 0u + 3u);
  EXPECT_FALSE(fs::exists(dir + "/optimizer/PWNED"));

  // Sizes only, and a sample.
  auto sizes = site_->manifest(request(dir, ManifestRequest::Hash::none));
  ASSERT_TRUE(sizes.ok()) << sizes.error().message;
  ASSERT_EQ(sizes->files.size(), 5u);
  for (const ManifestFile& f : sizes->files) EXPECT_EQ(f.sha256, "") << f.path;
  ManifestRequest sample = request(dir, ManifestRequest::Hash::listed);
  sample.hash_files = {"abc", "optimizer/shard 0.pt"};
  auto sampled = site_->manifest(sample);
  ASSERT_TRUE(sampled.ok()) << sampled.error().message;
  std::map<std::string, std::string> hashes;
  for (const ManifestFile& f : sampled->files) hashes[f.path] = f.sha256;
  EXPECT_EQ(hashes["abc"], kShaAbc);
  for (const ManifestFile& f : truth.files) {
    if (f.path == "optimizer/shard 0.pt") {
      EXPECT_EQ(hashes[f.path], f.sha256);
    }
  }
  EXPECT_EQ(hashes["optimizer/shard 0.pt"].size(), 64u);
  EXPECT_EQ(hashes["model.bin"], "");
}

TEST_F(StorageLabTest, SingleFileOverSsh) {
  write("ckpt/single.ckpt", "abc");
  auto m = site_->manifest(request(storage_ + "/ckpt/single.ckpt"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_FALSE(m->directory);
  ASSERT_EQ(m->files.size(), 1u);
  EXPECT_EQ(m->files[0].path, "");
  EXPECT_EQ(m->files[0].size, 3u);
  EXPECT_EQ(m->files[0].sha256, kShaAbc);
}

TEST_F(StorageLabTest, MissingPathIsNotFound) {
  const std::string path = storage_ + "/ckpt/never-saved";
  auto m = site_->manifest(request(path));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::not_found) << m.error().message;
  EXPECT_EQ(m.error().message, "site alpha: " + path + " does not exist at the site");
}

TEST_F(StorageLabTest, RemovePathDeletesOverSsh) {
  const std::string dir = make_checkpoint("step-200");
  ASSERT_TRUE(fs::exists(dir + "/model.bin"));
  const std::string within = storage_ + "/ckpt";
  auto removed = site_->remove_path({dir, within});
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(fs::exists(storage_ + "/ckpt"));
  auto gone = site_->manifest(request(dir));
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().kind, ErrorKind::not_found);
  auto again = site_->remove_path({dir, within});  // nothing left to delete: fine
  EXPECT_TRUE(again.ok()) << again.error().message;

  auto root = site_->remove_path({"/", within});
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().kind, ErrorKind::forbidden);
  auto relative = site_->remove_path({"ckpt", within});
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.error().kind, ErrorKind::invalid);
}

TEST_F(StorageLabTest, ALinkOutOfItsDirectoryIsNeitherListedNorDeletedOverSsh) {
  // Another job's checkpoint, and a copy in this job's directory that is a link to it.
  const std::string victim = make_checkpoint("step-400");
  const std::string mine = storage_ + "/ckpt/job-2";
  fs::create_directories(mine);
  fs::create_directory_symlink(victim, mine + "/step-1");
  ManifestRequest r = request(mine + "/step-1");
  r.within = mine;
  auto listed = site_->manifest(r);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().kind, ErrorKind::forbidden) << listed.error().message;
  auto removed = site_->remove_path({mine + "/step-1", mine});
  ASSERT_FALSE(removed.ok());
  EXPECT_EQ(removed.error().kind, ErrorKind::forbidden) << removed.error().message;
  EXPECT_TRUE(fs::exists(victim + "/model.bin"));
  EXPECT_TRUE(fs::is_symlink(mine + "/step-1"));
}

TEST_F(StorageLabTest, StoppedLoginNodeIsUnreachableQuickly) {
  const std::string dir = make_checkpoint("step-300");
  ASSERT_TRUE(site_->manifest(request(dir, ManifestRequest::Hash::none)).ok());  // connected
  ASSERT_TRUE(lab_->stop_login("alpha").ok());
  auto fresh = make_site();  // and one that never connected
  for (SlurmSite* site : {site_.get(), fresh.get()}) {
    const auto started = Clock::now();
    auto m = site->manifest(request(dir));
    const auto took = Clock::now() - started;
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().kind, ErrorKind::unreachable) << m.error().message;
    EXPECT_THAT(m.error().message, HasSubstr("alpha"));
    EXPECT_LT(took, std::chrono::seconds(10));
    auto removed = site->remove_path({dir, storage_ + "/ckpt"});
    ASSERT_FALSE(removed.ok());
    EXPECT_EQ(removed.error().kind, ErrorKind::unreachable) << removed.error().message;
  }
  EXPECT_TRUE(fs::exists(dir + "/model.bin"));
  ASSERT_TRUE(lab_->start_login("alpha").ok());
  // Back: a fresh site lists again (the old one's sessions may still be backing off).
  auto back = make_site()->manifest(request(dir, ManifestRequest::Hash::none));
  EXPECT_TRUE(back.ok()) << back.error().message;
}

}  // namespace
}  // namespace orch::test
