// Sweeps (issue 18): a submitted sweep is one job per point, made in one transaction, each
// placed as any job is and listed together by its group.
#include <gmock/gmock.h>

#include "scheduler/spec/job_spec_parser.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

class BrainSweep : public BrainFixture {
 protected:
  void SetUp() override { start({make_cluster("alpha")}); }
};

TEST_F(BrainSweep, ASweepIsOneJobPerPointPlacedAsCapacityAllowsAndListedByItsGroup) {
  JobSpec spec = make_job().name("lr").gpus(4);
  spec.sweep.env = {{"LR", {"1e-4", "3e-4", "1e-3"}}};
  spec.group = "lr";
  auto reply = brain->handle(SubmitJob{spec});
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_EQ(reply->jobs.size(), 3u);
  EXPECT_EQ(reply->job_id, reply->jobs[0].id);
  EXPECT_EQ(reply->jobs[2].name, "lr-3");
  // alpha has 8 GPUs: two points run, the third waits.
  EXPECT_EQ(reply->jobs[0].state, "placed");
  EXPECT_EQ(reply->jobs[1].state, "placed");
  EXPECT_EQ(reply->jobs[2].state, "pending");
  const JobRow third = job(reply->jobs[2].id);
  EXPECT_EQ(third.name, "lr-3");
  EXPECT_EQ(third.spec.env.at("LR"), "1e-3");
  EXPECT_EQ(third.spec.group, "lr");

  submit(make_job().name("other").gpus(1));
  JobQuery q;
  q.group = "lr";
  auto keys = store->job_page_keys(q).value();
  ASSERT_EQ(keys.size(), 3u) << "the group lists the sweep's jobs only";
  EXPECT_EQ(keys[0].id, reply->jobs[2].id) << "newest first";
}

TEST_F(BrainSweep, ASweepThatIsRefusedMakesNoJob) {
  JobSpec spec = make_job().name("lr").gpus(1).priority_class("nosuch");
  spec.sweep.args = {"--seed 1", "--seed 2"};
  auto reply = brain->handle(SubmitJob{spec});
  ASSERT_FALSE(reply.ok());
  JobQuery q;
  EXPECT_TRUE(store->job_page_keys(q).value().empty());
}

}  // namespace
}  // namespace orch::testing
