// The server's TransferPort routes by what a site's port can do and where its provider's
// storage lies, never by the provider's name: a port with a copier (ClusterPort::copier()) is
// copied through, straight to or from a site on this host's file system, and through a relay
// folder on this host when both ends copy through themselves.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "server/site_transfer_port.h"
#include "tests/harness/builders.h"
#include "tests/harness/fake_site.h"

namespace orch::testing {
namespace {

// A site whose storage this host reaches only through the site: it records each copy.
class CopyingSite final : public ClusterPort, public SiteCopier {
 public:
  struct Copy {
    std::string way;  // "out" or "in"
    TransferRequest request;
    std::string local_path;
  };
  std::vector<Copy> copies;

  SiteCopier* copier() override { return this; }
  Result<TransferOutcome> copy_out(const TransferRequest& request, const std::string& local_path,
                                   TransferControl&) override {
    copies.push_back({"out", request, local_path});
    return TransferOutcome{10, 1.0, "stream out", 0};
  }
  Result<TransferOutcome> copy_in(const TransferRequest& request, const std::string& local_path,
                                  TransferControl&) override {
    copies.push_back({"in", request, local_path});
    return TransferOutcome{10, 1.0, "stream in", 0};
  }

  Result<SiteInventory> inventory() override { return unused(); }
  Result<LaunchResult> launch(const LaunchRequest&) override { return unused(); }
  Result<std::optional<LaunchResult>> find(const std::string&) override { return unused(); }
  Result<RunObservation> observe(const std::string&, std::uint64_t) override { return unused(); }
  Result<void> cancel(const std::string&) override { return unused(); }
  Result<std::string> read_output(const std::string&, std::uint64_t, std::size_t) override {
    return unused();
  }

 private:
  static Error unused() { return make_error(ErrorKind::unsupported, "not in this test"); }
};

class NoControl final : public TransferControl {
 public:
  void progress(const TransferProgress&) override {}
  double cap_bytes_per_s() override { return 0; }
  bool stop_requested() override { return false; }
};

class SiteTransferPortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("site_transfer_port_test." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    // "pods" and "more-pods" are Kubernetes clusters by their spec, but only their ports'
    // copiers decide the route; "here" is a site on this host's file system.
    pods_ = make_cluster("pods").provider("kubernetes").storage("/data");
    more_pods_ = make_cluster("more-pods").provider("kubernetes").storage("/data");
    here_ = make_cluster("here").storage(dir_.string() + "/here");
    port_ = std::make_unique<SiteTransferPort>(std::vector<ClusterSpec>{pods_, more_pods_, here_},
                                               dir_.string() + "/transfers");
    port_->site_joined(pods_, &pods_site_);
    port_->site_joined(more_pods_, &more_pods_site_);
    port_->site_joined(here_, &here_site_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<TransferOutcome> copy(const std::string& from, const std::string& to) {
    TransferRequest r;
    r.id = 7;
    r.from = {from, "/data/ckpt-100"};
    r.to = {to, dir_.string() + "/here/ckpt-100"};
    NoControl control;
    return port_->run(r, control);
  }

  std::filesystem::path dir_;
  ClusterSpec pods_, more_pods_, here_;
  CopyingSite pods_site_, more_pods_site_;
  FakeSite here_site_;  // no copier: rsync reaches it
  std::unique_ptr<SiteTransferPort> port_;
};

TEST_F(SiteTransferPortTest, ACopyOutOfASiteWithACopierGoesStraightToASiteOnThisHost) {
  auto out = copy("pods", "here");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->route, "stream out");
  ASSERT_EQ(pods_site_.copies.size(), 1u);
  EXPECT_EQ(pods_site_.copies[0].way, "out");
  EXPECT_EQ(pods_site_.copies[0].local_path, dir_.string() + "/here/ckpt-100");
}

TEST_F(SiteTransferPortTest, ACopyIntoASiteWithACopierComesStraightFromASiteOnThisHost) {
  TransferRequest r;
  r.id = 8;
  r.from = {"here", dir_.string() + "/here/ckpt-100"};
  r.to = {"pods", "/data/ckpt-100"};
  NoControl control;
  auto in = port_->run(r, control);
  ASSERT_TRUE(in.ok()) << in.error().message;
  EXPECT_EQ(in->route, "stream in");
  ASSERT_EQ(pods_site_.copies.size(), 1u);
  EXPECT_EQ(pods_site_.copies[0].way, "in");
  EXPECT_EQ(pods_site_.copies[0].local_path, dir_.string() + "/here/ckpt-100");
}

TEST_F(SiteTransferPortTest, BetweenTwoSitesWithCopiersTheCopyIsRelayedThroughThisHost) {
  TransferRequest r;
  r.id = 9;
  r.from = {"pods", "/data/ckpt-100"};
  r.to = {"more-pods", "/data/ckpt-100"};
  NoControl control;
  auto relayed = port_->run(r, control);
  ASSERT_TRUE(relayed.ok()) << relayed.error().message;
  const std::string relay = dir_.string() + "/transfers/relay/9/ckpt-100";
  ASSERT_EQ(pods_site_.copies.size(), 1u);
  EXPECT_EQ(pods_site_.copies[0].way, "out");
  EXPECT_EQ(pods_site_.copies[0].local_path, relay);
  ASSERT_EQ(more_pods_site_.copies.size(), 1u);
  EXPECT_EQ(more_pods_site_.copies[0].way, "in");
  EXPECT_EQ(more_pods_site_.copies[0].local_path, relay);
  EXPECT_EQ(relayed->route, "relay via orchestrator (stream out, then stream in)");
  EXPECT_EQ(relayed->seconds, 2.0);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "transfers/relay/9")) << "removed after";
}

TEST_F(SiteTransferPortTest, ACopyToAClusterItDoesNotKnowIsRefused) {
  auto out = copy("pods", "nowhere");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::invalid);
  EXPECT_TRUE(pods_site_.copies.empty());
}

}  // namespace
}  // namespace orch::testing
