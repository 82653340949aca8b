// The data verifier on its own, over copies the registry recorded: a first listing verifies a
// copy and becomes its checkpoint's manifest; a listing that leads out of the job's directory
// refuses the copy; a copy found gone is marked missing and the copies from it are cancelled; a
// transferred copy that does not match its source is copied again; an audit lists each copy once
// at a time, inside its directory. The same rules through the whole brain are brain_data_test.cpp
// and brain_confinement_test.cpp.
#include <gmock/gmock.h>

#include "scheduler/brain/data_verifier.h"
#include "tests/harness/brain_part_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

class DataVerifierTest : public BrainPartFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha").storage("/data/alpha"), make_cluster("beta").storage("/data/b")});
    registry = std::make_unique<DataRegistry>(*core);
    transfers = std::make_unique<DataTransfers>(*core, *registry);
    verifier = std::make_unique<DataVerifier>(*core, *registry, *transfers);
    job = add_job(make_job(), JobState::running);
    attempt = add_attempt(job, "alpha", 1, {"alpha-n0"});
    own = registry->checkpoint_dir_of(attempt);
  }

  // A checkpoint at `step` reported by the attempt, recorded by the registry.
  std::int64_t report_checkpoint(std::int64_t step) {
    const std::string path = own + "/step-" + std::to_string(step);
    auto id = store->insert_checkpoint({0, job.id, attempt.id, step, path, 0.5, clock.now_ms()});
    std::int64_t checkpoint = id.value().value();
    in_transaction([&] { return registry->register_checkpoint(attempt, checkpoint, path); });
    return checkpoint;
  }
  // The site answers the oldest listing asked of it.
  void answer_listing(const std::string& cluster, Result<Manifest> result) {
    auto listing = outbox(cluster, ActionKind::manifest).at(0);
    in_transaction([&] {
      return verifier->on(ManifestCompleted{listing.id, cluster, listing.payload, result});
    });
  }
  static Manifest one_file(std::uint64_t size, char hash = 'a') {
    Manifest m;
    m.files.push_back({"", size, std::string(64, hash)});  // one file: the path itself
    return m;
  }
  ReplicaRow copy_at(std::int64_t checkpoint, const std::string& cluster) {
    for (const auto& r : store->replicas_of_checkpoint(checkpoint).value()) {
      if (r.cluster == cluster) return r;
    }
    ADD_FAILURE() << "no copy at " << cluster;
    return {};
  }
  // What the job's event of that kind said; empty when there is none.
  std::string event_said(const std::string& kind) {
    std::string said;
    for (const auto& e : store->events_of(job.id).value()) {
      if (e.kind == kind && said.empty()) said = e.message;
    }
    return said;
  }
  // A copy of the verified checkpoint at alpha to beta, finished by the worker (being verified).
  std::int64_t copied_to_beta(std::int64_t checkpoint) {
    std::int64_t id = transaction_value([&] {
      return transfers->start_transfer(
          copy_at(checkpoint, "alpha"), "beta",
          "/data/b/checkpoints/.orchestrate/replicas/job-" + std::to_string(job.id) + "/step-1",
          "off-site copy", 10);
    });
    in_transaction([&] { return transfers->on(TransferFinished{id, TransferOutcome{10, 1.0}}); });
    return id;
  }

  std::unique_ptr<DataRegistry> registry;
  std::unique_ptr<DataTransfers> transfers;
  std::unique_ptr<DataVerifier> verifier;
  JobRow job;
  AttemptRow attempt;
  std::string own;
};

TEST_F(DataVerifierTest, AFirstListingVerifiesTheCopyAndBecomesItsCheckpointsManifest) {
  std::int64_t ckpt = report_checkpoint(100);
  answer_listing("alpha", one_file(10));

  ReplicaRow copy = copy_at(ckpt, "alpha");
  EXPECT_EQ(copy.state, ReplicaState::verified);
  EXPECT_THAT(copy.detail, HasSubstr("1 file(s), 10 bytes"));
  EXPECT_EQ(store->checkpoint(ckpt).value()->bytes, 10);
  EXPECT_THAT(event_said("checkpoint-verified"), HasSubstr("verified at alpha"));
}

TEST_F(DataVerifierTest, AListingThatLeadsOutOfTheJobsDirectoryRefusesTheCopy) {
  std::int64_t ckpt = report_checkpoint(100);
  answer_listing("alpha", make_error(ErrorKind::forbidden, "a link leads to /etc"));

  EXPECT_EQ(copy_at(ckpt, "alpha").state, ReplicaState::refused);
  EXPECT_THAT(event_said("bad-progress-line"), HasSubstr("a link leads to /etc"));
}

TEST_F(DataVerifierTest, ACopyFoundGoneIsMissingAndTheCopiesFromItAreCancelled) {
  std::int64_t ckpt = report_checkpoint(1);
  answer_listing("alpha", one_file(10));
  std::int64_t transfer = transaction_value([&] {
    return transfers->start_transfer(copy_at(ckpt, "alpha"), "beta", "/data/b/x", "copy", 10);
  });
  in_transaction([&] { return verifier->start_due_audits(true, "alpha"); });
  answer_listing("alpha", make_error(ErrorKind::not_found, "no such directory"));

  EXPECT_EQ(copy_at(ckpt, "alpha").state, ReplicaState::missing);
  EXPECT_EQ(store->transfer(transfer).value()->state, TransferState::cancelled);
  EXPECT_EQ(copy_at(ckpt, "beta").state, ReplicaState::missing);
  EXPECT_THAT(event_said("checkpoint-lost"), HasSubstr("no such directory"));
}

TEST_F(DataVerifierTest, ATransferredCopyThatDoesNotMatchItsSourceIsCopiedAgain) {
  std::int64_t ckpt = report_checkpoint(1);
  answer_listing("alpha", one_file(10));
  std::int64_t transfer = copied_to_beta(ckpt);
  answer_listing("beta", one_file(10, 'b'));

  EXPECT_EQ(copy_at(ckpt, "beta").state, ReplicaState::corrupt);
  TransferRow t = store->transfer(transfer).value().value();
  EXPECT_EQ(t.state, TransferState::queued);
  EXPECT_THAT(t.error, HasSubstr("verification failed"));
  EXPECT_THAT(event_said("transfer-verify-failed"), HasSubstr("copying it again"));
}

TEST_F(DataVerifierTest, ATransferredCopyThatMatchesIsVerifiedAndItsTransferDone) {
  std::int64_t ckpt = report_checkpoint(1);
  answer_listing("alpha", one_file(10));
  std::int64_t transfer = copied_to_beta(ckpt);
  answer_listing("beta", one_file(10));

  EXPECT_EQ(copy_at(ckpt, "beta").state, ReplicaState::verified);
  EXPECT_EQ(store->transfer(transfer).value()->state, TransferState::done);
  EXPECT_THAT(event_said("checkpoint-replicated"), HasSubstr("copied to beta and verified"));
}

TEST_F(DataVerifierTest, AnAuditListsEachCopyInsideItsDirectoryOneAtATime) {
  report_checkpoint(100);
  answer_listing("alpha", one_file(10));
  in_transaction([&] { return verifier->start_due_audits(true, "alpha"); });
  in_transaction([&] { return verifier->start_due_audits(true, "alpha"); });

  auto audits = outbox("alpha", ActionKind::manifest);
  ASSERT_EQ(audits.size(), 1u) << "one audit in flight per copy";
  EXPECT_EQ(audits[0].payload.value("purpose", ""), "audit");
  EXPECT_EQ(audits[0].payload.value("within", ""), own);
}

}  // namespace
}  // namespace orch::testing
