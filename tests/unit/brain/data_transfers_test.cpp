// The data transfers on their own, over copies written directly: a copy between sites is queued
// with its destination's row being copied, confined to the job's replica directory there; a copy
// the worker finished is listed at its destination to be verified; one that failed is tried
// again later; the copies from a copy found bad are cancelled. Replication as the whole brain
// runs it is brain_data_test.cpp.
#include <gmock/gmock.h>

#include "scheduler/brain/data_transfers.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class DataTransfersTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha").storage("/data/alpha"), make_cluster("beta").storage("/data/b")});
    registry = std::make_unique<DataRegistry>(*core);
    transfers = std::make_unique<DataTransfers>(*core, *registry);
    job = add_job(make_job(), JobState::running);
    AttemptRow a = add_attempt(job, "alpha", 1, {"alpha-n0"});
    const std::string own = "/data/alpha/checkpoints/job-" + std::to_string(job.id);
    checkpoint =
        store->insert_checkpoint({0, job.id, a.id, 100, own + "/step-100", 0.5, 0}).value().value();
    source.checkpoint_id = checkpoint;
    source.cluster = "alpha";
    source.path = own + "/step-100";
    source.state = ReplicaState::verified;
    source.confined_to = own;
    source.id = store->insert_replica(source).value();
  }

  // The replica directory of the job at beta, and a copy of the checkpoint into it.
  std::string replicas_at_beta() const {
    return "/data/b/checkpoints/.orchestrate/replicas/job-" + std::to_string(job.id);
  }
  std::int64_t copy_to_beta() {
    return transaction_value([&] {
      return transfers->start_transfer(source, "beta", replicas_at_beta() + "/step-100",
                                       "off-site copy", 1000);
    });
  }
  ReplicaRow copy_at(const std::string& cluster) {
    for (const auto& r : store->replicas_of_checkpoint(checkpoint).value()) {
      if (r.cluster == cluster) return r;
    }
    ADD_FAILURE() << "no copy at " << cluster;
    return {};
  }
  TransferRow transfer(std::int64_t id) { return store->transfer(id).value().value(); }
  // What the job's event of that kind said; empty when there is none.
  std::string event_said(const std::string& kind) {
    std::string said;
    for (const auto& e : store->events_of(job.id).value()) {
      if (e.kind == kind && said.empty()) said = e.message;
    }
    return said;
  }

  std::unique_ptr<DataRegistry> registry;
  std::unique_ptr<DataTransfers> transfers;
  JobRow job;
  std::int64_t checkpoint = 0;
  ReplicaRow source;
};

TEST_F(DataTransfersTest, ACopyIsQueuedWithItsDestinationBeingCopiedInsideTheReplicaDirectory) {
  std::int64_t id = copy_to_beta();

  TransferRow t = transfer(id);
  EXPECT_EQ(t.state, TransferState::queued);
  EXPECT_EQ(t.src_cluster, "alpha");
  EXPECT_EQ(t.dst_cluster, "beta");
  EXPECT_EQ(t.bytes_total, 1000);
  ReplicaRow dst = copy_at("beta");
  EXPECT_EQ(t.replica_id, dst.id);
  EXPECT_EQ(dst.state, ReplicaState::copying);
  EXPECT_EQ(dst.detail, "being copied from alpha");
  EXPECT_EQ(dst.confined_to, replicas_at_beta());
}

TEST_F(DataTransfersTest, AFinishedCopyIsListedAtItsDestinationToBeVerified) {
  std::int64_t id = copy_to_beta();
  in_transaction([&] { return transfers->on(TransferFinished{id, TransferOutcome{1000, 2.0}}); });

  EXPECT_EQ(transfer(id).state, TransferState::verifying);
  auto listings = outbox("beta", ActionKind::manifest);
  ASSERT_EQ(listings.size(), 1u);
  EXPECT_EQ(listings[0].payload.value("purpose", ""), "verify");
  EXPECT_EQ(listings[0].payload.value("transfer_id", std::int64_t{0}), id);
  EXPECT_EQ(listings[0].payload.value("within", ""), replicas_at_beta());
}

TEST_F(DataTransfersTest, ACopyThatFailedIsTriedAgainLater) {
  std::int64_t id = copy_to_beta();
  in_transaction([&] {
    return transfers->on(TransferFinished{id, make_error(ErrorKind::unreachable, "no route")});
  });

  TransferRow t = transfer(id);
  EXPECT_EQ(t.state, TransferState::queued);
  EXPECT_EQ(t.tries, 1);
  EXPECT_TRUE(t.next_try_ms.has_value());
  EXPECT_THAT(event_said("transfer-retry"), HasSubstr("no route"));
}

// The bandwidth between two sites is kept between plans (issue 45's scale goal) and read again
// once a transfer row was written, or an event that wrote one rolled back.
TEST_F(DataTransfersTest, TheBandwidthBetweenTwoSitesFollowsTheCopiesThatFinishAndRollBacks) {
  const double prior = transfers->bandwidth_between("alpha", "beta").value();
  auto finish = [&](std::int64_t id, std::int64_t bytes, double seconds) {
    TransferRow t = transfer(id);
    t.state = TransferState::done;
    t.copied_bytes = bytes;
    t.copy_seconds = seconds;
    return store->update_transfer(t);
  };
  ASSERT_TRUE(finish(copy_to_beta(), 800'000'000, 10).ok());
  EXPECT_DOUBLE_EQ(transfers->bandwidth_between("alpha", "beta").value(), 80e6);
  EXPECT_DOUBLE_EQ(transfers->bandwidth_between("beta", "alpha").value(), 80e6);
  EXPECT_NE(prior, 80e6);

  // A second copy done at 20 MB/s, read inside an event that then fails: after the rollback the
  // first copy alone measures the pair again.
  const std::int64_t second = copy_to_beta();
  auto failed = store->transaction([&]() -> Result<void> {
    if (auto r = finish(second, 200'000'000, 10); !r) return r;
    EXPECT_DOUBLE_EQ(transfers->bandwidth_between("alpha", "beta").value(), 50e6);
    return make_error(ErrorKind::internal, "the event failed");
  });
  EXPECT_FALSE(failed.ok());
  EXPECT_DOUBLE_EQ(transfers->bandwidth_between("alpha", "beta").value(), 80e6);
}

TEST_F(DataTransfersTest, TheCopiesFromACopyFoundBadAreCancelled) {
  std::int64_t id = copy_to_beta();
  in_transaction([&] { return transfers->cancel_transfers_from(source, "its source is missing"); });

  TransferRow t = transfer(id);
  EXPECT_EQ(t.state, TransferState::cancelled);
  EXPECT_THAT(t.error, HasSubstr("its source is missing"));
  EXPECT_EQ(copy_at("beta").state, ReplicaState::missing);
}

}  // namespace
}  // namespace orch::testing
