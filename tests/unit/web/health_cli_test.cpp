// The health client commands in-process against a real HttpServer over the fake backend:
// node list/quarantine/release, cluster burn-in (with --wait) and probes, report providers,
// and the checkpoint advice of job show.
#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/client_cli.h"
#include "cli/health_commands.h"
#include "tests/unit/web/cli_server_fixture.h"
#include "tests/unit/web/fake_backend.h"
#include "web/api_routes.h"
#include "web/http/http_server.h"

namespace orch {
namespace {

// Every command here goes to the fixture's server.
class HealthCliTest : public CliServerTest {
 protected:
  int cli(std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back(options.server);
    return CliServerTest::cli(std::move(args));
  }
};

TEST_F(HealthCliTest, NodeList) {
  EXPECT_EQ(run_node_list(options, "", "", out, err), kExitOk) << err.str();
  EXPECT_EQ(out.str(),
            "CLUSTER         NODE  STATE        GPUS  HEALTHY  FAILURES  QUARANTINES  "
            "NEXT_FAILURE                     REASON\n"
            "alpha           a1    active       8     yes      1/2       0            "
            "the next failure quarantines it\n"
            "alpha           a2    quarantined  8     no       0/2       1            "
            "out of service                   quarantined by hand: Xid 79 twice\n"
            "beta-long-name  b1    retired      8     yes      0/2       3            "
            "out of service                   retired after 3 quarantines\n");
  out.str("");
  EXPECT_EQ(run_node_list(options, "alpha", "active", out, err), kExitOk);
  EXPECT_EQ(backend.last_node_filter.cluster, "alpha");
  EXPECT_EQ(backend.last_node_filter.state, "active");
  EXPECT_EQ(out.str(),
            "CLUSTER  NODE  STATE   GPUS  HEALTHY  FAILURES  QUARANTINES  NEXT_FAILURE"
            "                     REASON\n"
            "alpha    a1    active  8     yes      1/2       0            the next failure "
            "quarantines it\n");
  EXPECT_EQ(run_node_list(options, "zeta", "", out, err), kExitServerError);
  EXPECT_EQ(err.str(), "error: no cluster named \"zeta\"\n");
}

TEST_F(HealthCliTest, NodeShowGivesTheEvidenceOfItsRateAndWhatItDecided) {
  EXPECT_EQ(cli({"node", "show", "beta-long-name", "b1"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(),
            "node b1 of beta-long-name: retired (retired after 3 quarantines)\n"
            "GPUs 8, healthy yes, quarantined 3 time(s)\n"
            "rate: 3 failures in 212 GPU-hours: 9.1x its cluster's rate (0.0016/GPU-h); a lemon: "
            "retired\n"
            "count rule: 0 of 2 failures within 168 h; out of service\n");
  out.str("");
  EXPECT_EQ(cli({"node", "show", "alpha", "a9"}), kExitServerError);
  EXPECT_THAT(err.str(), ::testing::HasSubstr("cluster alpha has no node \"a9\""));
}

TEST_F(HealthCliTest, NodeListThroughCli11) {
  EXPECT_EQ(cli({"node", "list", "--state", "quarantined", "-o", "json"}), kExitOk) << err.str();
  auto body = nlohmann::json::parse(out.str());
  ASSERT_EQ(body["nodes"].size(), 1u);
  EXPECT_EQ(body["nodes"][0]["quarantined_at_ms"], 1700000400000);
  EXPECT_EQ(cli({"node", "list", "--state", "broken"}), kExitUsage);
  EXPECT_EQ(cli({"node"}), kExitUsage);
}

TEST_F(HealthCliTest, QuarantineAndRelease) {
  EXPECT_EQ(cli({"node", "quarantine", "alpha", "a2", "--reason", "Xid 79 twice"}), kExitOk)
      << err.str();
  EXPECT_TRUE(backend.last_quarantine);
  EXPECT_EQ(backend.last_node, "a2");
  EXPECT_EQ(backend.last_reason, "Xid 79 twice");
  EXPECT_EQ(out.str(),
            "node a2 of alpha is quarantined: no new work is placed on it until it is released\n");
  out.str("");
  EXPECT_EQ(cli({"node", "release", "alpha", "a2"}), kExitOk) << err.str();
  EXPECT_FALSE(backend.last_quarantine);
  EXPECT_EQ(backend.last_reason, "");
  EXPECT_EQ(out.str(), "node a2 of alpha is active and may take work again\n");
  EXPECT_EQ(cli({"node", "release", "alpha", "a9"}), kExitServerError);
  EXPECT_EQ(err.str(), "error: cluster alpha has no node \"a9\"; its nodes: a1, a2\n");
  EXPECT_EQ(cli({"node", "release", "alpha"}), kExitUsage);
}

TEST_F(HealthCliTest, DrainActivateRetire) {
  EXPECT_EQ(cli({"cluster", "drain", "alpha", "--reason", "maintenance"}), kExitOk) << err.str();
  EXPECT_EQ(backend.last_reason, "maintenance");
  EXPECT_EQ(out.str(),
            "cluster alpha is draining: no new work; running jobs finish or move at their next "
            "checkpoint\n");
  out.str("");
  EXPECT_EQ(cli({"cluster", "activate", "alpha"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "cluster alpha is active and takes new work\n");
  out.str("");
  EXPECT_EQ(cli({"cluster", "retire", "alpha"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(),
            "cluster alpha is retired: its running jobs are moved now, and it takes no work "
            "again\n");
  EXPECT_EQ(cli({"cluster", "activate", "alpha"}), kExitServerError);
  EXPECT_EQ(err.str(), "error: cluster alpha is retired; a retired cluster does not come back\n");
  EXPECT_EQ(cli({"cluster", "drain"}), kExitUsage);
}

TEST_F(HealthCliTest, TicketsOpenUpdateCloseListShow) {
  EXPECT_EQ(cli({"ticket", "open", "alpha", "a2 loses its IB link", "--node", "a2", "--incident",
                 "job 7 attempt 1"}),
            kExitOk)
      << err.str();
  EXPECT_EQ(out.str(), "opened ticket 1 with alpha's provider\n");
  ASSERT_EQ(backend.tickets.size(), 1u);
  EXPECT_EQ(backend.tickets[0]["nodes"], nlohmann::json({"a2"}));
  EXPECT_EQ(backend.tickets[0]["incident"], "job 7 attempt 1");
  out.str("");
  EXPECT_EQ(cli({"ticket", "update", "1", "looking at it", "--provider"}), kExitOk) << err.str();
  EXPECT_THAT(out.str(), ::testing::HasSubstr("first response 1.5 h; resolved -"));
  EXPECT_THAT(out.str(), ::testing::HasSubstr("provider  looking at it"));
  out.str("");
  EXPECT_EQ(cli({"ticket", "close", "1", "--resolution", "cable replaced"}), kExitOk) << err.str();
  EXPECT_THAT(out.str(), ::testing::HasSubstr("Ticket 1 with alpha's provider (closed): a2 loses "
                                              "its IB link\n  nodes: a2\n  incident: job 7 "
                                              "attempt 1\n"));
  EXPECT_THAT(out.str(), ::testing::HasSubstr("resolved 26 h"));
  out.str("");
  EXPECT_EQ(cli({"ticket", "list", "--cluster", "alpha", "--state", "closed"}), kExitOk);
  EXPECT_EQ(backend.last_ticket_query, "alpha|closed|100");
  EXPECT_THAT(out.str(), ::testing::HasSubstr("ID  CLUSTER  STATE   OPENED"));
  EXPECT_THAT(out.str(), ::testing::HasSubstr("a2 loses its IB link"));
  out.str("");
  EXPECT_EQ(cli({"ticket", "close", "1"}), kExitServerError);
  EXPECT_EQ(err.str(), "error: ticket 1 (alpha) is already closed\n");
  EXPECT_EQ(cli({"ticket", "show", "9"}), kExitServerError);
  EXPECT_EQ(cli({"ticket", "open", "alpha"}), kExitUsage);
  EXPECT_EQ(cli({"ticket", "list", "--state", "gone"}), kExitUsage);
}

TEST_F(HealthCliTest, ClusterReload) {
  EXPECT_EQ(cli({"cluster", "reload"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "cluster beta-long-name is no longer in the file: draining\n");
  backend.reload_error = "the clusters file was not reloaded, nothing changed: c.yaml:3:5: bad";
  EXPECT_EQ(cli({"cluster", "reload"}), kExitServerError);
  EXPECT_EQ(err.str(),
            "error: the clusters file was not reloaded, nothing changed: c.yaml:3:5: bad\n");
}

TEST_F(HealthCliTest, ClusterAdd) {
  const std::string file = ::testing::TempDir() + "/cli_add_gamma.yaml";
  const std::string doc = "clusters:\n  - {name: gamma, provider: local}\n";
  std::ofstream(file) << doc;
  EXPECT_EQ(cli({"cluster", "add", file}), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "joined: gamma (active)\n");
  EXPECT_EQ(backend.added_document, doc);
  EXPECT_EQ(backend.added_source, file) << "the file is named for the server's errors";

  std::ofstream(file) << "clusters:\n  - {name: alpha}\n";
  EXPECT_EQ(cli({"cluster", "add", file}), kExitServerError);
  EXPECT_EQ(err.str(), "error: cluster \"alpha\" is already configured\n");
  err.str("");
  EXPECT_EQ(cli({"cluster", "add", "/no/such/missing.yaml"}), kExitUsage);
  EXPECT_THAT(err.str(), ::testing::HasSubstr("missing.yaml"));
  EXPECT_EQ(cli({"cluster", "add"}), kExitUsage);
}

TEST_F(HealthCliTest, ClusterCheckPrintsOneLinePerCheckAndFailsWhenOneFailed) {
  EXPECT_EQ(cli({"cluster", "check", "alpha"}), kExitServerError) << err.str();
  EXPECT_EQ(out.str(),
            "key-file         FAILED  cannot read /k\n"
            "cluster alpha takes no jobs until every check passes; fix what FAILED says and run "
            "`orchestrate cluster check alpha` again\n");
  EXPECT_EQ(backend.checks, 1);
  EXPECT_EQ(cli({"cluster", "check", "zeta"}), kExitServerError);
  EXPECT_EQ(cli({"cluster", "check"}), kExitUsage);
}

TEST_F(HealthCliTest, BurnInWithoutWait) {
  EXPECT_EQ(run_cluster_burn_in(options, "alpha", false, 600, out, err), kExitOk) << err.str();
  EXPECT_EQ(out.str(),
            "burn-in of alpha started (round r2); `orchestrate cluster probes alpha` shows the "
            "results\n");
  EXPECT_EQ(backend.burn_ins, 1);
  EXPECT_EQ(run_cluster_burn_in(options, "alpha", false, 600, out, err), kExitServerError);
  EXPECT_NE(err.str().find("already burning in"), std::string::npos) << err.str();
  EXPECT_EQ(run_cluster_burn_in(options, "zeta", false, 600, out, err), kExitServerError);
}

TEST_F(HealthCliTest, BurnInWaitsForActiveThenShowsTheLatestRound) {
  backend.burn_in_polls = 3;
  EXPECT_EQ(run_cluster_burn_in(options, "alpha", true, 60, out, err), kExitOk) << err.str();
  EXPECT_EQ(backend.burn_in_polls, 0) << "polled until admitted";
  EXPECT_EQ(out.str(),
            "cluster alpha is active\n"
            "Round r2 at " +
                out.str().substr(out.str().find(" at ") + 4, 19) +
                ": 1 of 2 node(s) passed\n"
                "NODE  PASSED  GFLOPS  WRITE_MB/S  READ_MB/S  REASON\n"
                "a1    yes     91.5    812.3       -          ok\n"
                "a2    no      41.2    812.3       -          GEMM 41.2 GFLOP/s is 0.45 of the "
                "median 91.5\n");
  EXPECT_EQ(backend.last_probe_limit, 1000);
}

TEST_F(HealthCliTest, BurnInWaitAsJson) {
  backend.burn_in_polls = 1;
  options.output = "json";
  EXPECT_EQ(run_cluster_burn_in(options, "alpha", true, 60, out, err), kExitOk) << err.str();
  auto body = nlohmann::json::parse(out.str());
  EXPECT_EQ(body["admission"], "active");
  ASSERT_EQ(body["probes"].size(), 2u);
  EXPECT_EQ(body["probes"][0]["round"], "r2");
}

TEST_F(HealthCliTest, BurnInWaitTimesOut) {
  backend.burn_in_polls = 1000000;
  EXPECT_EQ(cli({"cluster", "burn-in", "alpha", "--wait", "--timeout", "1"}), kExitServerError);
  EXPECT_NE(err.str().find("error: cluster alpha is still burn-in after 1 s"), std::string::npos)
      << err.str();
  EXPECT_EQ(cli({"cluster", "burn-in", "alpha", "--timeout", "0"}), kExitUsage);
}

TEST_F(HealthCliTest, Probes) {
  EXPECT_EQ(run_cluster_probes(options, "alpha", "", out, err), kExitOk) << err.str();
  EXPECT_TRUE(has(": 1 of 2 node(s) passed\n")) << out.str();
  EXPECT_FALSE(has("90.1")) << "only the latest round";
  out.str("");
  EXPECT_EQ(run_cluster_probes(options, "alpha", "a1", out, err), kExitOk) << err.str();
  EXPECT_EQ(backend.last_probe_node, "a1");
  EXPECT_EQ(out.str().rfind("TIME", 0), 0u) << out.str();
  EXPECT_TRUE(has("  r2     a1    yes     91.5")) << out.str();
  EXPECT_TRUE(has("  r1     a1    yes     90.1")) << out.str();
  EXPECT_EQ(run_cluster_probes(options, "zeta", "", out, err), kExitServerError);
}

TEST_F(HealthCliTest, ReportCostPrintsMoneyToTheCentAndTheTotal) {  // issue 45
  EXPECT_EQ(cli({"report", "cost", "--by", "team", "--since", "2026-12-01"}), kExitOk) << err.str();
  EXPECT_EQ(backend.last_cost_query.by, "team");
  EXPECT_EQ(backend.last_cost_query.since, "2026-12-01");
  const std::string text = out.str();
  EXPECT_NE(text.find(" in USD\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find("NAME    GPU_H  USEFUL_GPU_H  LOST_GPU_H  MONEY  USEFUL  LOST  REDONE  RESTART  "
                "QUEUED  FAILED  COMMITTED  IDLE\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("vision  7.77   6.80          0.97        15.53  13.60   1.93  1.07    0.60     "
                "0.27    0.00    -          -\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("TOTAL   7.77"), std::string::npos) << text;
  out.str("");
  EXPECT_EQ(cli({"report", "cost", "-o", "json"}), kExitOk);
  EXPECT_EQ(backend.last_cost_query.by, "cluster");
  EXPECT_EQ(nlohmann::json::parse(out.str())["rows"].size(), 1u);
  EXPECT_EQ(cli({"report", "cost", "--by", "node"}), kExitUsage);
}

TEST_F(HealthCliTest, ReportProviders) {
  EXPECT_EQ(run_report_providers(options, 0, out, err), kExitOk) << err.str();
  EXPECT_EQ(backend.last_window_days, 30);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("Provider scorecards from ", 0), 0u) << text;
  EXPECT_NE(text.find("NAME            KIND     AVAIL  INTERRUPTS/1kGPUh  MTBF_H  "
                      "DETECT_P50/P95_S  RECOVER_P50/P95_S  PARTS_P50_S  MFU    CKPT_P95_S  "
                      "IO_STALLS  QUARANTINED  "
                      "GPU_H   TICKETS  RESPONSE_H  RESOLVE_H  DELIVERY_D  MONEY  "
                      "USEFUL_GPUH/1K\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("alpha           cluster  98.8%  2.43               410.2   15/21.5           "
                "80/120             0/0.2/12/45  41.2%  12.5        3          1/2          1234.5 "
                " 1/2      "
                "1.5         "
                "26         3.5         -      -\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("beta-long-name  cluster  98.8%  -                  -       -/-               "
                "-/-                -/-/-/-      -      -           3          1/2          1234.5 "
                " 0/0      "
                "-           "
                "-          -           -      -\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("acme            vendor"), std::string::npos) << text;
  out.str("");
  EXPECT_EQ(cli({"report", "providers", "--window-days", "7", "-o", "json"}), kExitOk);
  EXPECT_EQ(backend.last_window_days, 7);
  EXPECT_EQ(nlohmann::json::parse(out.str())["cards"].size(), 3u);
  EXPECT_EQ(cli({"report", "providers", "--window-days", "0"}), kExitUsage);
}

TEST_F(HealthCliTest, JobShowGivesCheckpointAdvice) {
  EXPECT_EQ(run_job_show(options, 1, out, err), kExitOk) << err.str();
  EXPECT_TRUE(
      has("  checkpoint advice every 1897 s (~9035 steps) (Young: 60 s checkpoint cost, "
          "MTBF 8.3 h on alpha)\n"))
      << out.str();
  EXPECT_TRUE(has("  expected ETTR    0.900 at 949 s, 0.930 at 1897 s, 0.910 at 3795 s\n"))
      << out.str();
  out.str("");
  EXPECT_EQ(run_job_show(options, 2, out, err), kExitOk) << err.str();
  EXPECT_FALSE(has("checkpoint advice")) << "job 2 never ran";
}

TEST_F(HealthCliTest, PlanGivesTheIntervalAndTheEttrAroundIt) {
  EXPECT_EQ(run_plan(options, 1, out, err), kExitOk) << err.str();
  EXPECT_TRUE(has("checkpoint every 1897 s (~9035 steps)")) << out.str();
  EXPECT_TRUE(has("restart 300 s, expected MFU 0.41\n")) << out.str();
  EXPECT_TRUE(has("INTERVAL S  STEPS  EXPECTED ETTR  FIRST ORDER")) << out.str();
  EXPECT_TRUE(has("1897        9035   0.930          -            <- best interval\n"))
      << out.str();
  EXPECT_TRUE(
      has("hot spares: hold 1 (2.88 failures a day; a relaunch onto a spare assumed to "
          "take 30 s)\n"))
      << out.str();
  EXPECT_TRUE(has("1       0.9               310              192             118\n")) << out.str();
  out.str("");
  EXPECT_EQ(run_plan(options, 2, out, err), kExitOk) << err.str();
  EXPECT_TRUE(has("no advice yet")) << out.str();
}

TEST_F(HealthCliTest, ClusterListShowsAdmission) {
  EXPECT_EQ(run_cluster_list(options, out, err), kExitOk) << err.str();
  EXPECT_TRUE(has("NAME            PROVIDER  HEALTH   ADMISSION  NODES")) << out.str();
  EXPECT_TRUE(has("alpha           local     healthy  active     2x8")) << out.str();
  EXPECT_TRUE(has("beta-long-name  slurm     down     pending    4x8")) << out.str();
}

}  // namespace
}  // namespace orch
