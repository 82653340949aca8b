// Issue 45's cost test by hand, through the real server: two local clusters with known prices
// (alpha 2,000 USD, beta 3,500 USD per GPU-hour, a slot standing for a GPU), a job on alpha that
// is killed once (SIGKILL at step 25, its checkpoint at 20) and then preempted for a hero job, a
// job on beta. `orchestrate report cost` gives each cluster's money to the cent as the attempts'
// own times and GPUs priced by hand, useful and lost adding up; /metrics and the job's view give
// the same totals.
#include <gmock/gmock.h>

#include <cmath>
#include <map>
#include <regex>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

// Dear enough that seconds of two slots come to whole cents and more (to the cent means something).
const std::map<std::string, double> kPrice = {{"alpha", 2000.00}, {"beta", 3500.00}};

// The fleet of local_clusters_yaml(1, 2), each cluster with its price.
std::string priced_clusters_yaml() {
  std::string yaml = local_clusters_yaml(1, 2);
  for (const auto& [name, price] : kPrice) {
    const std::size_t at = yaml.find("}\n", yaml.find("{name: " + name));
    char section[96];
    std::snprintf(section, sizeof section, ",\n     price: {per_gpu_hour: %.2f, currency: USD}",
                  price);
    yaml.insert(at, section);
  }
  return yaml + "priority_classes: {hero: 1000, ablation: 100}\n";
}

long long cents(double money) {
  return std::llround(money * 100.0);
}

class CostE2eTest : public E2eTest {
 protected:
  void SetUp() override { start_with(priced_clusters_yaml()); }

  // What the jobs' attempts cost, by cluster, from their own rows: GPUs x (end - placement).
  std::map<std::string, double> priced_by_hand(const std::vector<std::int64_t>& jobs) {
    std::map<std::string, double> out;
    for (std::int64_t id : jobs) {
      for (const json& a : attempts(id)) {
        const std::string cluster = a["cluster"].get<std::string>();
        const double hours =
            (a["ended_ms"].get<double>() - a["started_ms"].get<double>()) / 3'600'000.0;
        out[cluster] += a["gpus"].get<double>() * hours * kPrice.at(cluster);
      }
    }
    return out;
  }
  // The sum of a /metrics family's samples of one cluster (and kind, when given).
  static double metric_sum(const std::string& body, const std::string& family,
                           const std::string& cluster, const std::string& kind = "") {
    const std::regex sample(family + "\\{team=\"[^\"]*\",cluster=\"" + cluster +
                            "\",kind=\"([a-z]+)\"\\} ([0-9.e+-]+)\n");
    double sum = 0;
    for (std::sregex_iterator it(body.begin(), body.end(), sample), end; it != end; ++it) {
      if (kind.empty() || (*it)[1] == kind) sum += std::stod((*it)[2]);
    }
    return sum;
  }
};

TEST_F(CostE2eTest, ReportCostMetricsAndTheJobAgreeToTheCentWithTheAttemptsPricedByHand) {
  const std::string more =
      "priority: ablation\npreemption: {grace_s: 20}\n"
      "placement: {allowed: [alpha]}\nteam: vision\n" +
      restart_yaml(1);
  const std::int64_t train = submit(job_yaml(
      "train",
      "--steps 200 --step-delay-ms 20 --ckpt-every 10 --signal-at-step 25 --fault-attempt 1",
      more));
  ASSERT_GT(train, 0);
  const std::int64_t other = submit(job_yaml("other", "--steps 60 --step-delay-ms 20",
                                             "placement: {allowed: [beta]}\nteam: nlp\n"));
  ASSERT_GT(other, 0);
  // Killed once, it resumes from step 20 and runs on: then a hero that only alpha may hold.
  ASSERT_FALSE(wait_job(
                   train,
                   [](const json& j) {
                     return j["attempts"] == 2 && j["step"].is_number() && j["step"] >= 60;
                   },
                   "run its second attempt past step 60")
                   .is_null())
      << describe_job(url_, train);
  const std::int64_t hero =
      submit(job_yaml("hero", "--steps 20 --step-delay-ms 20",
                      "priority: hero\nplacement: {allowed: [alpha]}\nteam: vision\n"));
  for (std::int64_t id : {hero, train, other}) {
    ASSERT_EQ(wait_final(id)["state"], "succeeded") << describe_job(url_, id);
  }
  const json runs = attempts(train);
  ASSERT_EQ(runs.size(), 3u) << runs.dump();
  EXPECT_NE(runs[0]["cause"], "succeeded") << "the kill: " << runs.dump();
  EXPECT_EQ(runs[1]["cause"], "priority_preempted") << runs.dump();

  ProcessResult cost = cli({"report", "cost", "--by", "cluster", "-o", "json"});
  ASSERT_EQ(cost.exit_code, 0) << cost.output;
  const json report = json::parse(cost.output);
  EXPECT_EQ(report["currency"], "USD");
  const std::map<std::string, double> by_hand = priced_by_hand({train, other, hero});
  std::map<std::string, json> rows;
  for (const json& r : report["rows"]) rows[r["key"].get<std::string>()] = r;
  ASSERT_EQ(rows.size(), 2u) << report.dump();
  for (const auto& [cluster, money] : by_hand) {
    const json& m = rows[cluster]["money"];
    const json& h = rows[cluster]["gpu_hours"];
    EXPECT_EQ(cents(m["total"].get<double>()), cents(money)) << cluster << ": " << report.dump();
    EXPECT_EQ(cents(m["useful"].get<double>() + m["lost"].get<double>()),
              cents(m["total"].get<double>()));
    EXPECT_EQ(cents(m["useful"].get<double>()),
              cents(h["useful"].get<double>() * kPrice.at(cluster)));
    EXPECT_EQ(cents(m["lost"].get<double>()), cents(h["lost"].get<double>() * kPrice.at(cluster)));
  }
  // Three start-ups and two queues are lost money; what the kill threw away (steps past the
  // checkpoint the next attempt resumed from, often none on a local site) is redone.
  EXPECT_GT(rows["alpha"]["money"]["lost"].get<double>(), 0) << report.dump();
  EXPECT_GT(rows["alpha"]["money"]["restart"].get<double>(), 0) << report.dump();
  std::printf("alpha: useful %.2f, lost %.2f (redone %.2f) USD\n",
              rows["alpha"]["money"]["useful"].get<double>(),
              rows["alpha"]["money"]["lost"].get<double>(),
              rows["alpha"]["money"]["redone"].get<double>());

  // The table prints the same money to the cent.
  ProcessResult table = cli({"report", "cost"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  char alpha_total[32];
  std::snprintf(alpha_total, sizeof alpha_total, "%.2f",
                rows["alpha"]["money"]["total"].get<double>());
  EXPECT_THAT(table.output, ::testing::HasSubstr(alpha_total)) << table.output;

  // /metrics: the same totals, useful and lost, per cluster.
  const HttpResponse metrics = call(url_, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const auto& [cluster, row] : rows) {
    EXPECT_EQ(cents(metric_sum(metrics.body, "orchestrate_cost_total", cluster)),
              cents(row["money"]["total"].get<double>()))
        << cluster << "\n"
        << metrics.body;
    EXPECT_EQ(cents(metric_sum(metrics.body, "orchestrate_cost_total", cluster, "useful")),
              cents(row["money"]["useful"].get<double>()))
        << cluster;
  }

  // The job's view (what the page's job header shows) and the report by job.
  const json by_job = json::parse(cli({"report", "cost", "--by", "job", "-o", "json"}).output);
  const json view = job(train);
  for (const json& r : by_job["rows"]) {
    if (r["job"] != train) continue;
    EXPECT_EQ(cents(r["money"]["useful"].get<double>()),
              cents(view["cost"]["money"]["useful"].get<double>()));
    EXPECT_EQ(cents(r["money"]["lost"].get<double>()),
              cents(view["cost"]["money"]["lost"].get<double>()));
    EXPECT_EQ(r["team"], "vision");
    return;
  }
  ADD_FAILURE() << "no row for job " << train << " in " << by_job.dump();
}

}  // namespace
}  // namespace orch::e2e
