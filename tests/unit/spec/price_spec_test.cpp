// The clusters file's money keys (issue 45): a cluster's `price:` (windows, a contract), one
// currency per fleet, the fleet's `placement: {objective}` and a team's `objective:` and
// `budget:`, and how each mistake is worded (file:line:col).
#include <gmock/gmock.h>

#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/price_section.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

// Two clusters; `alpha_extra` and `beta_extra` are appended to their entries (flow maps).
std::string clusters(const std::string& alpha_extra, const std::string& beta_extra = "",
                     const std::string& rest = "") {
  return "clusters:\n"
         "  - {name: alpha, provider: local, nodes: 2, gpus_per_node: 4" +
         alpha_extra +
         "}\n"
         "  - {name: beta, provider: local, nodes: 1, gpus_per_node: 8" +
         beta_extra + "}\n" + rest;
}

std::string error_of(const std::string& yaml) {
  auto r = parse_clusters_file(yaml, "clusters.yaml");
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

TEST(PriceSpec, AClusterWithoutAPriceHasNone) {
  auto file = parse_clusters_file(clusters(""), "c").value();
  EXPECT_FALSE(file.clusters[0].price.configured);
  EXPECT_EQ(file.scheduling.objective, "goodput");
}

TEST(PriceSpec, APriceWithWindowsAndAContractIsReadIntoThePriceSpec) {
  auto file = parse_clusters_file(
                  "clusters:\n"
                  "  - name: alpha\n"
                  "    provider: local\n"
                  "    price:\n"
                  "      per_gpu_hour: 2.10\n"
                  "      currency: EUR\n"
                  "      windows: [{hours: \"22:00-06:00\", per_gpu_hour: 1.40}]\n"
                  "      contract: {start: 2026-12-01, end: 2027-03-01}\n",
                  "c")
                  .value();
  const PriceSpec& p = file.clusters[0].price;
  EXPECT_TRUE(p.configured);
  EXPECT_DOUBLE_EQ(p.per_gpu_hour, 2.10);
  EXPECT_EQ(p.currency, "EUR");
  ASSERT_EQ(p.windows.size(), 1u);
  EXPECT_EQ(p.windows[0].hours, "22:00-06:00");
  EXPECT_EQ(p.windows[0].from_min, 22 * 60);
  EXPECT_EQ(p.windows[0].to_min, 6 * 60);
  EXPECT_DOUBLE_EQ(p.windows[0].per_gpu_hour, 1.40);
  EXPECT_EQ(p.contract_start, "2026-12-01");
  EXPECT_EQ(p.contract_end, "2027-03-01");
  EXPECT_EQ(p.contract_start_ms, utc_date_ms("2026-12-01"));
  EXPECT_EQ(p.contract_end_ms, 1'803'859'200'000);  // 2027-03-01 00:00 UTC
}

TEST(PriceSpec, TheCurrencyIsUsdUnlessWritten) {
  auto file = parse_clusters_file(clusters(", price: {per_gpu_hour: 3}"), "c").value();
  EXPECT_EQ(file.clusters[0].price.currency, "USD");
  EXPECT_FALSE(file.clusters[1].price.configured);
}

TEST(PriceSpec, EachPriceMistakeIsNamedWhereItIs) {
  EXPECT_THAT(error_of(clusters(", price: {currency: USD}")),
              HasSubstr("clusters.yaml:2:71: missing required key \"per_gpu_hour\" in price"));
  EXPECT_THAT(error_of(clusters(", price: {per_gpu_hour: -1}")),
              HasSubstr("clusters.yaml:2:86: \"per_gpu_hour\" must be"));
  EXPECT_THAT(error_of(clusters(", price: {per_gpu_hour: 2, currency: usd}")),
              HasSubstr("\"currency\" must be three capital letters, such as USD or EUR, got"));
  EXPECT_THAT(error_of(clusters(", price: {per_gpu_hour: 2, per_gpu_day: 40}")),
              HasSubstr("per_gpu_day"));
  EXPECT_THAT(error_of(clusters(", price: 2.10")), HasSubstr("price"));
  EXPECT_THAT(error_of(clusters(", price: {per_gpu_hour: 2, windows: {hours: x}}")),
              HasSubstr("\"price.windows\" must be a list, got a map"));
  EXPECT_THAT(error_of(clusters(", price: {per_gpu_hour: 2, windows: [{hours: \"25:00-06:00\", "
                                "per_gpu_hour: 1}]}")),
              HasSubstr("price.windows[0]: window \"25:00-06:00\": hour 25"));
  EXPECT_THAT(error_of(clusters(", price: {per_gpu_hour: 2, windows: [{hours: \"22:00-06:00\"}]}")),
              HasSubstr("missing required key \"per_gpu_hour\" in price.windows[0]"));
  EXPECT_THAT(error_of(clusters(", price: {per_gpu_hour: 2, contract: {start: 2026-12-01}}")),
              HasSubstr("missing required key \"end\" in price.contract"));
  EXPECT_THAT(error_of(clusters(", price: {per_gpu_hour: 2, contract: {start: 2026-02-30, end: "
                                "2027-03-01}}")),
              HasSubstr("\"price.contract.start\" must be a date YYYY-MM-DD, got \"2026-02-30\""));
  EXPECT_THAT(
      error_of(clusters(", price: {per_gpu_hour: 2, contract: {start: 2027-03-01, end: "
                        "2026-12-01}}")),
      HasSubstr("\"price.contract.end\" (2026-12-01) must be after its start (2027-03-01)"));
}

TEST(PriceSpec, TwoWindowsThatOverlapAreRefused) {
  EXPECT_THAT(error_of(clusters(", price: {per_gpu_hour: 2, windows: [{hours: \"22:00-06:00\", "
                                "per_gpu_hour: 1}, {hours: \"05:00-07:00\", per_gpu_hour: 3}]}")),
              HasSubstr("price.windows[1]: hours \"05:00-07:00\" overlap window \"22:00-06:00\""));
  auto ok = parse_clusters_file(
      clusters(", price: {per_gpu_hour: 2, windows: [{hours: \"22:00-06:00\", per_gpu_hour: 1}, "
               "{hours: \"06:00-08:00\", per_gpu_hour: 3}]}"),
      "c");
  EXPECT_TRUE(ok.ok());
}

TEST(PriceSpec, AFleetPricedInTwoCurrenciesIsRefusedNamingBoth) {
  const std::string err = error_of(clusters(", price: {per_gpu_hour: 2, currency: USD}",
                                            ", price: {per_gpu_hour: 2, currency: EUR}"));
  EXPECT_THAT(err, HasSubstr("clusters.yaml:3:"));
  EXPECT_THAT(err, HasSubstr("cluster \"beta\" is priced in EUR and cluster \"alpha\" in USD: a "
                             "fleet's prices are in one currency; expected currency: USD"));
  EXPECT_THAT(
      error_of(clusters(", price: {per_gpu_hour: 2, currency: EUR}", ", price: {per_gpu_hour: 2}")),
      HasSubstr("cluster \"beta\" is priced in USD and cluster \"alpha\" in EUR"));
  EXPECT_TRUE(parse_clusters_file(clusters(", price: {per_gpu_hour: 2, currency: EUR}",
                                           ", price: {per_gpu_hour: 1, currency: EUR}"),
                                  "c")
                  .ok());
}

TEST(PriceSpec, AClusterAddedToARunningFleetMustPriceInItsCurrency) {
  // What `orchestrate cluster add` asks of each cluster against those the server has.
  const auto fleet = parse_clusters_file(clusters(", price: {per_gpu_hour: 2, currency: EUR}"), "c")
                         .value()
                         .clusters;
  auto added = parse_clusters_file(
                   "clusters:\n  - {name: gamma, provider: local, price: {per_gpu_hour: 1}}\n", "a")
                   .value()
                   .clusters.at(0);
  const ClusterSpec* with = nullptr;
  EXPECT_EQ(currency_conflict(added, fleet, &with),
            "cluster \"gamma\" is priced in USD and cluster \"alpha\" in EUR: a fleet's prices "
            "are in one currency");
  ASSERT_NE(with, nullptr);
  EXPECT_EQ(with->name, "alpha");
  added.price.currency = "EUR";
  EXPECT_EQ(currency_conflict(added, fleet), "");
  added.price.configured = false;  // an unpriced cluster joins any fleet
  added.price.currency = "JPY";
  EXPECT_EQ(currency_conflict(added, fleet), "");
}

TEST(PriceSpec, ThePlacementObjectiveIsGoodputOrGoodputPerCost) {
  auto file =
      parse_clusters_file(clusters("", "", "placement: {objective: goodput_per_cost}\n"), "c");
  EXPECT_EQ(file.value().scheduling.objective, "goodput_per_cost");
  EXPECT_THAT(error_of(clusters("", "", "placement: {objective: cheapest}\n")),
              HasSubstr("clusters.yaml:4:24: \"objective\" must be goodput or goodput_per_cost, "
                        "got \"cheapest\""));
  EXPECT_THAT(error_of(clusters("", "", "placement: {goal: goodput}\n")), HasSubstr("goal"));
}

const std::string kPriced = ", price: {per_gpu_hour: 2}";
const std::string kClasses = "priority_classes: {low: 10, hero: {value: 1000, teams: [llm]}}\n";

TEST(PriceSpec, ATeamMayHaveABudgetInMoneyOrGpuHoursAndItsOwnObjective) {
  auto file = parse_clusters_file(
                  clusters(kPriced, "",
                           kClasses + "teams:\n"
                                      "  vision: {gpus: 8, budget: {money: 50000}}\n"
                                      "  nlp: {budget: {gpu_hours: 20000, over: low}, objective: "
                                      "goodput_per_cost}\n"),
                  "c")
                  .value();
  const TeamQuota& vision = file.scheduling.teams.at("vision");
  EXPECT_TRUE(vision.budget.configured);
  EXPECT_EQ(vision.budget.money, 50000);
  EXPECT_FALSE(vision.budget.gpu_hours.has_value());
  EXPECT_EQ(vision.budget.over, "hold");
  EXPECT_FALSE(vision.objective.has_value());
  const TeamQuota& nlp = file.scheduling.teams.at("nlp");
  EXPECT_EQ(nlp.budget.gpu_hours, 20000);
  EXPECT_EQ(nlp.budget.over, "low");
  EXPECT_EQ(nlp.objective, "goodput_per_cost");
  EXPECT_FALSE(nlp.gpus.has_value());  // a budget alone: no GPU bound
}

TEST(PriceSpec, EachBudgetMistakeIsNamedWhereItIs) {
  auto team = [](const std::string& body) {
    return error_of(clusters(kPriced, "", kClasses + "teams:\n  vision: " + body + "\n"));
  };
  EXPECT_THAT(team("{budget: {money: 5, gpu_hours: 10}}"),
              HasSubstr("clusters.yaml:6:31: team \"vision\": a budget gives exactly one of money "
                        "and gpu_hours, got both"));
  EXPECT_THAT(team("{budget: {over: hold}}"),
              HasSubstr("a budget gives exactly one of money and gpu_hours, got neither"));
  EXPECT_THAT(team("{budget: {money: 0}}"), HasSubstr("\"money\" must be"));
  EXPECT_THAT(team("{budget: {money: 10, over: lwo}}"),
              HasSubstr("team \"vision\": budget.over names \"lwo\", which is neither hold nor a "
                        "priority class of this file (did you mean \"low\"?)"));
  EXPECT_THAT(team("{budget: {money: 10, over: hero}}"),
              HasSubstr("budget.over names priority class \"hero\", which only teams llm may use"));
  EXPECT_THAT(team("{objective: cheap}"), HasSubstr("\"objective\" must be goodput or"));
  EXPECT_THAT(error_of(clusters("", "", "teams:\n  vision: {budget: {money: 100}}\n")),
              HasSubstr("team \"vision\": a budget in money needs prices, and no cluster of this "
                        "file has one"));
  EXPECT_TRUE(
      parse_clusters_file(clusters("", "", "teams:\n  vision: {budget: {gpu_hours: 100}}\n"), "c")
          .ok());
}

TEST(PriceSpec, ADateIsAUtcMidnight) {
  EXPECT_EQ(utc_date_ms("1970-01-02"), 86'400'000);
  EXPECT_EQ(utc_date_ms("2026-13-01"), std::nullopt);
  EXPECT_EQ(utc_date_ms("2026-1-01"), std::nullopt);
  EXPECT_EQ(utc_date_ms("soon"), std::nullopt);
}

}  // namespace
}  // namespace orch
