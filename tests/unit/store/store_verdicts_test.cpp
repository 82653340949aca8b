// Placement verdicts: a feasible cluster's breakdown is stored as numbers and read back as the
// very text it would have made when written, whatever the numbers and names.
#include <gmock/gmock.h>

#include <limits>

#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"
#include "tests/harness/builders.h"
#include "tests/unit/store/store_rows.h"

namespace orch {
namespace {

class StoreVerdicts : public ::testing::Test {
 protected:
  void SetUp() override {
    store = std::move(Store::open(":memory:").value());
    job = store->insert_job(testing::new_job_row()).value();
  }
  std::unique_ptr<Store> store;
  JobId job = 0;
};

ScoreNote goodput(double mfu, double ettr, double mtbf_s, double flops, double staging_s,
                  double factor) {
  ScoreNote n;
  n.kind = ScoreNote::Kind::goodput;
  n.mfu = mfu;
  n.ettr = ettr;
  n.node_mtbf_s = mtbf_s;
  n.flops = flops;
  n.staging_s = staging_s;
  n.staging_factor = factor;
  return n;
}

TEST_F(StoreVerdicts, ABreakdownReadsBackAsTheTextItMadeWhenWritten) {
  ScoreNote unknown;
  unknown.kind = ScoreNote::Kind::peak_unknown;
  unknown.accelerator = "tpu \"v9\"";
  const double inf = std::numeric_limits<double>::infinity();
  PlacementVerdictRow a{job, "alpha", true, "", 10.0 / 3, true, 70};
  a.parts = {{"goodput", 6.0, goodput(0.35, 0.1 + 0.2, 7.2e6, 2.75e15, 0, 1)},
             {"move-worth", 0.0, {}},
             {"avoid-failed-site", 4.0, {}},
             {"free-capacity", 1.0 / 3, {}}};
  PlacementVerdictRow b{job, "zürich", true, "", 1.0 / 7, false, 70};
  b.parts = {{"goodput", 6.0 * 989 / 1307, goodput(0.4, 0.99, 5400, 9.1e14, 600, 0.993)},
             {"move-worth", 0.0, {}},
             {"avoid-failed-site", 4.0, {}},
             {"free-capacity", 0.25, {}}};
  PlacementVerdictRow c{job, "gamma", true, "", 0.5, false, 70};
  c.parts = {{"goodput", 0.0, unknown}, {"preferred", 2.0, {}}};  // other scores: named apart
  PlacementVerdictRow d{job, "delta", true, "", 0.0, false, 70};
  d.parts = {{"goodput", 0.0, goodput(0.35, 0.9, 3600, 1e9, inf, 0)},
             {"move-worth", 0.0, {}},
             {"avoid-failed-site", 4.0, {}},
             {"free-capacity", 0.0, {}}};
  PlacementVerdictRow e{job, "epsilon", false, "capacity: only 0 of 8 GPUs \"free\"\\\n",
                        {},  false,     70};
  PlacementVerdictRow a2 = a;  // a cluster like alpha: the same note, stored once
  a2.cluster = "alpha-2";
  a2.chosen = false;
  a2.parts[3].value = 0.5;
  const std::vector<PlacementVerdictRow> rows = {a, b, c, d, e, a2};
  ASSERT_TRUE(store->replace_verdicts(job, rows).ok());

  auto back = store->verdicts_of(job).value();
  ASSERT_EQ(back.size(), 6u);
  std::map<std::string, PlacementVerdictRow> by_cluster;
  for (const auto& v : back) by_cluster[v.cluster] = v;
  for (const auto& v : rows) {
    SCOPED_TRACE(v.cluster);
    ASSERT_EQ(by_cluster.count(v.cluster), 1u);
    const PlacementVerdictRow& r = by_cluster[v.cluster];
    EXPECT_EQ(r.reason, v.feasible ? breakdown_text(v.parts) : v.reason);
    EXPECT_EQ(r.feasible, v.feasible);
    EXPECT_EQ(r.score, v.score);
    EXPECT_EQ(r.chosen, v.chosen);
    EXPECT_EQ(r.at_ms, 70);
  }
  EXPECT_THAT(by_cluster["alpha"].reason,
              ::testing::StartsWith("goodput=6.000 (mfu 0.35, ettr 0.300, node mtbf 2000 h, 2.75 "
                                    "PFLOP/s) move-worth=0.000 avoid-failed-site=4.000 "
                                    "free-capacity=0.333"));
  EXPECT_THAT(by_cluster["zürich"].reason, ::testing::HasSubstr("moving here 600 s (x0.993)"));
  EXPECT_EQ(by_cluster["gamma"].reason,
            "goodput=0.000 (peak unknown for accelerator \"tpu \"v9\"\") preferred=2.000");
  EXPECT_THAT(by_cluster["delta"].reason, ::testing::HasSubstr("moving here inf s (x0.000)"));
  EXPECT_THAT(by_cluster["alpha-2"].reason, ::testing::EndsWith("free-capacity=0.500"));
}

// Issue 45: the goodput note's price, currency, FLOP per unit of money and objective read back
// as written (job explain's figures per cluster), and a note without them as before.
TEST_F(StoreVerdicts, AGoodputNotesPriceAndObjectiveReadBackAsWritten) {
  ScoreNote own = goodput(0.4, 0.99, 7.2e6, 8e11, 0, 1);
  own.priced = ScoreNote::Priced::own;
  own.price_per_gpu_hour = 2.1;
  own.currency = "EUR";
  own.flop_per_money = 6.9e14;
  own.per_cost = true;
  ScoreNote assumed = own;
  assumed.priced = ScoreNote::Priced::assumed;
  assumed.price_per_gpu_hour = 4.2;
  assumed.flop_per_money = 0;
  PlacementVerdictRow a{job, "cheap", true, "", 6.0, true, 70};
  a.parts = {{"goodput", 6.0, own}, {"free-capacity", 1.0, {}}};
  PlacementVerdictRow b{job, "unpriced", true, "", 3.0, false, 70};
  b.parts = {{"goodput", 3.0, assumed}, {"free-capacity", 1.0, {}}};
  PlacementVerdictRow c{job, "plain", true, "", 2.0, false, 70};
  c.parts = {{"goodput", 2.0, goodput(0.35, 0.9, 3600, 1e12, 0, 1)}};
  ASSERT_TRUE(store->replace_verdicts(job, {a, b, c}).ok());

  auto back = store->verdicts_of(job).value();
  ASSERT_EQ(back.size(), 3u);
  const ScoreNote& r = back[0].goodput;
  EXPECT_EQ(r.priced, ScoreNote::Priced::own);
  EXPECT_DOUBLE_EQ(r.price_per_gpu_hour, 2.1);
  EXPECT_EQ(r.currency, "EUR");
  EXPECT_DOUBLE_EQ(r.flop_per_money, 6.9e14);
  EXPECT_TRUE(r.per_cost);
  EXPECT_THAT(back[0].reason, ::testing::HasSubstr("2.10 EUR/GPU-h, 690 TFLOP per EUR)"));
  EXPECT_EQ(back[1].goodput.priced, ScoreNote::Priced::assumed);
  EXPECT_THAT(back[1].reason, ::testing::HasSubstr("no price (judged at 4.20 EUR/GPU-h)"));
  EXPECT_EQ(back[2].goodput.priced, ScoreNote::Priced::none);
  EXPECT_FALSE(back[2].goodput.per_cost);
  EXPECT_DOUBLE_EQ(back[2].goodput.flops, 1e12);
}

TEST_F(StoreVerdicts, AReasonSharedByClustersIsStoredOnceAndReadBackForEach) {
  const std::string undelivered = "admission: cluster is not delivered yet";
  std::vector<PlacementVerdictRow> rows;
  for (const char* c : {"c1", "c2", "c3"})
    rows.push_back({job, c, false, undelivered, {}, false, 7});
  rows.push_back({job, "c4", false, "site-healthy: site is down", {}, false, 7});
  ASSERT_TRUE(store->replace_verdicts(job, rows).ok());
  auto text = store->db().prepare("SELECT verdicts FROM placement_explain WHERE job_id = ?");
  ASSERT_TRUE(text.ok());
  text->bind(1, job);
  ASSERT_TRUE(text->step().value());
  const std::string stored = text->col_text(0);
  EXPECT_EQ(stored.find(undelivered), stored.rfind(undelivered)) << stored;
  auto back = store->verdicts_of(job).value();
  ASSERT_EQ(back.size(), 4u);
  for (const auto& v : back) {
    EXPECT_FALSE(v.feasible);
    EXPECT_EQ(v.reason, v.cluster == "c4" ? "site-healthy: site is down" : undelivered);
  }
}

TEST_F(StoreVerdicts, ARowWrittenBeforeReasonsWereSharedReadsAsItWas) {
  auto st = store->db().prepare(
      "INSERT INTO placement_explain(job_id, at_ms, verdicts) VALUES (?, 5, ?)");
  ASSERT_TRUE(st.ok());
  st->bind(1, job).bind(
      2,
      R"({"scores":[],"verdicts":[{"cluster":"a","feasible":0,"reason":"retired"}],"notes":[]})");
  ASSERT_TRUE(st->run().ok());
  auto back = store->verdicts_of(job).value();
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].reason, "retired");
  EXPECT_FALSE(back[0].feasible);
}

TEST_F(StoreVerdicts, ADecisionReplacesTheLastAndNoneClearsIt) {
  ASSERT_TRUE(
      store->replace_verdicts(job, {{job, "alpha", false, "site is down", {}, false, 1}}).ok());
  ASSERT_TRUE(store->replace_verdicts(job, {{job, "beta", false, "retired", {}, false, 2}}).ok());
  auto back = store->verdicts_of(job).value();
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].reason, "retired");
  ASSERT_TRUE(store->replace_verdicts(job, {}).ok());
  EXPECT_TRUE(store->verdicts_of(job).value().empty());
}

}  // namespace
}  // namespace orch
