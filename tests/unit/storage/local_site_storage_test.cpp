// LocalSite::manifest and LocalSite::remove_path: the site's storage is this host's filesystem
// (adapters/storage through /bin/sh), errors name the site, and a site in a simulated outage
// answers unreachable. No agent is needed: nothing is launched.

#include <gmock/gmock.h>

#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kShaAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

class LocalSiteStorageTest : public LocalSiteTest {
 protected:
  std::string make_checkpoint() {
    const std::string dir = root_ + "/ckpt/step-500";
    fs::create_directories(dir + "/shards");
    std::ofstream(dir + "/model.bin") << "abc";
    std::ofstream(dir + "/shards/it's 1.bin") << "abc";
    std::ofstream(dir + "/opt.pt") << "";
    return dir;
  }
};

TEST_F(LocalSiteStorageTest, ManifestOfACheckpointDirectory) {
  const std::string dir = make_checkpoint();
  ManifestRequest r;
  r.path = dir;
  auto m = site_->manifest(r);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m->directory);
  ASSERT_EQ(m->files.size(), 3u);
  EXPECT_EQ(m->files[0].path, "model.bin");
  EXPECT_EQ(m->files[0].sha256, kShaAbc);
  EXPECT_EQ(m->files[1].path, "opt.pt");
  EXPECT_EQ(m->files[1].size, 0u);
  EXPECT_EQ(m->files[2].path, "shards/it's 1.bin");
  EXPECT_EQ(m->files[2].size, 3u);
  std::uint64_t total = 0;
  for (const ManifestFile& f : m->files) total += f.size;
  EXPECT_EQ(total, 6u);

  r.hash = ManifestRequest::Hash::listed;
  r.hash_files = {"shards/it's 1.bin"};
  auto sampled = site_->manifest(r);
  ASSERT_TRUE(sampled.ok()) << sampled.error().message;
  EXPECT_EQ(sampled->files[0].sha256, "");
  EXPECT_EQ(sampled->files[2].sha256, kShaAbc);
}

TEST_F(LocalSiteStorageTest, MissingPathIsNotFoundNamingTheSite) {
  ManifestRequest r;
  r.path = root_ + "/ckpt/step-900";
  auto m = site_->manifest(r);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::not_found);
  EXPECT_EQ(m.error().message, "site loc: " + r.path + " does not exist at the site");
}

TEST_F(LocalSiteStorageTest, RemovePathDeletesRefusesAndToleratesMissing) {
  const std::string dir = make_checkpoint();
  const std::string within = root_ + "/ckpt";
  ASSERT_TRUE(site_->remove_path({dir, within}).ok());
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(fs::exists(root_ + "/ckpt"));
  auto again = site_->remove_path({dir, within});
  EXPECT_TRUE(again.ok()) << again.error().message;

  for (const std::string& bad : {std::string("ckpt/step-500"), std::string("")}) {
    auto refused = site_->remove_path({bad, within});
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().kind, ErrorKind::invalid);
    EXPECT_THAT(refused.error().message, HasSubstr("site loc: refusing to delete"));
  }
  // Outside its directory, or the directory itself: nothing is deleted.
  for (const std::string& outside : {std::string("/"), within, root_}) {
    auto refused = site_->remove_path({outside, within});
    ASSERT_FALSE(refused.ok()) << outside;
    EXPECT_EQ(refused.error().kind, ErrorKind::forbidden) << outside;
  }
  // Without a directory to confine it, nothing is deleted either.
  const std::string other = make_checkpoint();
  auto unconfined = site_->remove_path({other, ""});
  ASSERT_FALSE(unconfined.ok());
  EXPECT_EQ(unconfined.error().kind, ErrorKind::invalid);
  EXPECT_TRUE(fs::exists(other + "/model.bin"));
}

TEST_F(LocalSiteStorageTest, DuringAnOutageStorageIsUnreachable) {
  const std::string dir = make_checkpoint();
  ASSERT_TRUE(site_->set_outage(true).ok());
  ManifestRequest r;
  r.path = dir;
  auto m = site_->manifest(r);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::unreachable);
  auto removed = site_->remove_path({dir, root_ + "/ckpt"});
  ASSERT_FALSE(removed.ok());
  EXPECT_EQ(removed.error().kind, ErrorKind::unreachable);
  EXPECT_TRUE(fs::exists(dir + "/model.bin"));
  ASSERT_TRUE(site_->set_outage(false).ok());
  EXPECT_TRUE(site_->manifest(r).ok());
}

}  // namespace
}  // namespace orch::testing
