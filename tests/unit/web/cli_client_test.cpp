// The client commands in-process against a real HttpServer over the fake backend.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/client_cli.h"
#include "cli/output_table.h"
#include "tests/unit/web/cli_server_fixture.h"
#include "tests/unit/web/fake_backend.h"
#include "web/api_routes.h"
#include "web/http/http_server.h"

namespace orch {
namespace {

using CliClientTest = CliServerTest;

TEST(OutputTable, AlignsColumns) {
  Table table({"ID", "NAME", "STATE"});
  table.add_row({"1", "llama-8b", "running"});
  table.add_row({"12", "x\ty", "pending"});
  std::ostringstream out;
  table.print(out);
  EXPECT_EQ(out.str(),
            "ID  NAME      STATE\n"
            "1   llama-8b  running\n"
            "12  x y       pending\n");
  EXPECT_EQ(percent(0.4123), "41.2%");
  EXPECT_EQ(percent(nullptr), "-");
  EXPECT_EQ(cell(nlohmann::json(2.50)), "2.5");
  EXPECT_EQ(field(nlohmann::json::array(), "x"), "-");
}

// Every command that puts an argument into a JSON body, given bytes that are not UTF-8: a usage
// error naming the argument, never an abort (JSON text must be UTF-8).
TEST_F(CliClientTest, ArgumentsThatAreNotUtf8AreAUsageErrorNotAnAbort) {
  const std::string bad = "caf\xe9";
  const std::vector<std::vector<std::string>> commands = {
      {"token", "create", bad, "--role", "user"},
      {"token", "create", "x", "--role", "user", "--teams", bad},
      {"cluster", "drain", "alpha", "--reason", bad},
      {"node", "quarantine", "alpha", "n1", "--reason", bad},
      {"ticket", "open", "alpha", bad},
      {"secret", "grant", "hf", "--teams", bad},
  };
  for (auto args : commands) {
    args.insert(args.begin(), {"--server", options.server});
    err.str("");
    EXPECT_EQ(cli(args), 2) << args[2];
    EXPECT_NE(err.str().find("is not valid UTF-8"), std::string::npos) << err.str();
  }
}

TEST_F(CliClientTest, ClusterList) {
  EXPECT_EQ(run_cluster_list(options, out, err), kExitOk);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("NAME            PROVIDER  HEALTH", 0), 0u) << text;
  EXPECT_NE(text.find("alpha           local     healthy  active     2x8    2        8/16"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("marked down by operator"), std::string::npos);
  EXPECT_EQ(err.str(), "");
}

TEST_F(CliClientTest, JsonOutputIsTheServersJson) {
  options.output = "json";
  EXPECT_EQ(run_cluster_list(options, out, err), kExitOk);
  EXPECT_EQ(nlohmann::json::parse(out.str())["clusters"].size(), 2u);
}

TEST_F(CliClientTest, ClusterOutage) {
  EXPECT_EQ(run_cluster_outage(options, "alpha", true, out, err), kExitOk);
  EXPECT_TRUE(backend.last_down);
  EXPECT_NE(out.str().find("cluster alpha is in a simulated outage"), std::string::npos);
  EXPECT_EQ(run_cluster_outage(options, "beta gamma", false, out, err), kExitOk);
  EXPECT_EQ(backend.last_cluster, "beta gamma");
  EXPECT_EQ(run_cluster_outage(options, "zeta", true, out, err), kExitServerError);
  EXPECT_EQ(err.str(), "error: no cluster named 'zeta'\n");
}

TEST_F(CliClientTest, ClusterNodes) {
  EXPECT_EQ(run_cluster_nodes(options, "alpha", 0, out, err), kExitOk) << err.str();
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("Cluster alpha: 2 node(s), 1 unhealthy\n"
                       "NODE  GPUS  HEALTH     STATE   FAILURES  NEXT_FAILURE                    "
                       "             REASON\n"
                       "a1    8     healthy    active  0/2       2 more failures within 7 days "
                       "quarantine it\n"
                       "a2    8     unhealthy  active  1/2       the next failure quarantines it "
                       "             drain: Xid 79\n"
                       "\nRecent node events\n"
                       "TIME",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("a2    node-failure    1    1        node failure under job 1 attempt 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("a2    node-unhealthy  -    -        node a2 turned unhealthy"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("node-failure"), text.find("node-unhealthy")) << "newest first";
  EXPECT_EQ(backend.last_event_limit, 50);

  EXPECT_EQ(run_cluster_nodes(options, "alpha", 1, out, err), kExitOk);
  EXPECT_EQ(backend.last_event_limit, 1);
  EXPECT_EQ(run_cluster_nodes(options, "zeta", 0, out, err), kExitServerError);
  EXPECT_EQ(err.str(), "error: no cluster named \"zeta\"\n");
}

TEST_F(CliClientTest, ClusterNodesAsJson) {
  EXPECT_EQ(
      cli({"cluster", "nodes", "alpha", "--limit", "1", "--server", options.server, "-o", "json"}),
      kExitOk)
      << err.str();
  auto body = nlohmann::json::parse(out.str());
  EXPECT_EQ(body["nodes"].size(), 2u);
  EXPECT_EQ(body["events"].size(), 1u);
  EXPECT_EQ(body["nodes"][1]["reason"], "drain: Xid 79");
  EXPECT_EQ(cli({"cluster", "nodes", "alpha", "--limit", "0"}), kExitUsage);
  EXPECT_EQ(cli({"cluster", "nodes"}), kExitUsage);
}

TEST_F(CliClientTest, JobSubmit) {
  const std::string path = ::testing::TempDir() + "/cli_submit_job.yaml";
  std::ofstream(path) << "name: new-job\n";
  EXPECT_EQ(run_job_submit(options, path, out, err), kExitOk);
  EXPECT_EQ(out.str(), "3\n");  // the id alone, for scripts; the next step on err
  EXPECT_EQ(err.str(), "submitted job 3; follow it with: orchestrate job logs 3 --follow\n");
  err.str("");
  EXPECT_EQ(backend.last_source, path);
  EXPECT_EQ(backend.last_body, "name: new-job\n");

  std::ofstream(path) << "name: bad\n";
  EXPECT_EQ(run_job_submit(options, path, out, err), kExitServerError);
  EXPECT_EQ(err.str(), "error: " + path + ":2:7: gpus_per_node must be positive\n");
  std::remove(path.c_str());
  EXPECT_EQ(run_job_submit(options, "/no/such/file.yaml", out, err), kExitUsage);
}

TEST_F(CliClientTest, JobList) {
  EXPECT_EQ(run_job_list(options, {"running", "alpha", "", "", "", 0, ""}, out, err), kExitOk);
  EXPECT_EQ(backend.last_filter.state, "running");
  EXPECT_EQ(backend.last_filter.cluster, "alpha");
  EXPECT_EQ(backend.last_filter.limit, 100);
  EXPECT_FALSE(backend.last_filter.cursor);
  const std::string text = out.str();
  EXPECT_NE(text.find("ID  NAME      STATE      CLUSTER  GPUS"), std::string::npos) << text;
  EXPECT_NE(text.find("41.2%"), std::string::npos);
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(run_job_list(options, {"sleeping", "", "", "", "", 0, ""}, out, err), kExitServerError);
  EXPECT_NE(err.str().find("error: unknown job state 'sleeping'"), std::string::npos);
}

TEST_F(CliClientTest, JobListByOwnerAndTeam) {
  EXPECT_EQ(run_job_list(options, {"", "", "alice", "vision", "lr-sweep", 0, ""}, out, err),
            kExitOk);
  EXPECT_EQ(backend.last_filter.owner, "alice");
  EXPECT_EQ(backend.last_filter.team, "vision");
  EXPECT_EQ(backend.last_filter.group, "lr-sweep");
  EXPECT_FALSE(backend.last_filter.state);
}

TEST_F(CliClientTest, JobListPagesWithTheServersCursor) {
  backend.next_cursor = "7";
  EXPECT_EQ(run_job_list(options, {"", "", "", "", "", 2, "9"}, out, err), kExitOk);
  EXPECT_EQ(backend.last_filter.limit, 2);
  EXPECT_EQ(backend.last_filter.cursor, 9);
  EXPECT_EQ(err.str(), "more jobs: orchestrate job list --cursor 7\n");
  EXPECT_EQ(run_job_list(options, {"", "", "", "", "", 0, "x"}, out, err), kExitServerError);
  EXPECT_NE(err.str().find("cursor must be the \"next\" value of a previous page"),
            std::string::npos)
      << err.str();
}

TEST_F(CliClientTest, JobShow) {
  EXPECT_EQ(run_job_show(options, 1, out, err), kExitOk) << err.str();
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("Job 1: llama-8b\n", 0), 0u) << text;
  EXPECT_NE(text.find("last checkpoint  step 1000 at /ckpt/1000"), std::string::npos) << text;
  EXPECT_NE(text.find("NO  CLUSTER         SITE JOB  NODES  FAILED ON  STATE"), std::string::npos)
      << text;
  // Per attempt: cluster, site job id, nodes and the one that failed first, steps, MFU.
  EXPECT_NE(text.find("1   beta-long-name  42        n1,n2  n2         exited   node_lost  0..500"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("2   alpha           7         a1,a2  -          running  none       380..1200"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("38%"), std::string::npos);
  EXPECT_NE(text.find("41.2%"), std::string::npos);
  // Where attempt 2's recovery went, as the server split it.
  EXPECT_NE(text.find("Recovery (last sign of life to first progress line)\n  attempt 2 after "
                      "node_lost: 41.5 s: detection 7.0 s, backoff 0.0 s, placing 0.5 s, site "
                      "4.0 s, startup 30.0 s\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("event2 "), std::string::npos);  // only the last 10 events
  EXPECT_NE(text.find("event3 "), std::string::npos);
  EXPECT_NE(text.find("message number 12"), std::string::npos);

  EXPECT_EQ(run_job_show(options, 9, out, err), kExitServerError);
  EXPECT_EQ(err.str(), "error: no job with id 9\n");
}

TEST_F(CliClientTest, JobExplainAndCancel) {
  EXPECT_EQ(run_job_explain(options, 1, out, err), kExitOk);
  EXPECT_NE(out.str().find("chosen: alpha"), std::string::npos);
  EXPECT_NE(out.str().find("cluster is down"), std::string::npos);
  EXPECT_EQ(run_job_cancel(options, 1, out, err), kExitOk);
  EXPECT_NE(out.str().find("cancel requested for job 1"), std::string::npos);
  EXPECT_EQ(run_job_cancel(options, 2, out, err), kExitServerError);
  EXPECT_EQ(err.str(), "error: job 2 already succeeded\n");
}

TEST_F(CliClientTest, JobLogs) {
  EXPECT_EQ(run_job_logs(options, 1, 2, false, out, err), kExitOk);
  EXPECT_EQ(out.str(), backend.logs);
  EXPECT_EQ(backend.last_log.attempt_no, 2);
}

TEST_F(CliClientTest, JobLogsFollowUntilTerminal) {
  backend.finish_after_logs = 4;
  EXPECT_EQ(run_job_logs(options, 1, std::nullopt, true, out, err), kExitOk) << err.str();
  EXPECT_EQ(out.str(), backend.logs);  // every line exactly once
  EXPECT_NE(out.str().find("step 5\n"), std::string::npos) << out.str();
  EXPECT_EQ(backend.last_log.attempt_no, 2);  // followed the latest attempt
}

TEST_F(CliClientTest, UnreachableServerIsExit3) {
  server_->stop();
  EXPECT_EQ(run_cluster_list(options, out, err), kExitUnreachable);
  EXPECT_NE(err.str().find("error: cannot reach orchestrate server at " + options.server),
            std::string::npos);
  options.server = "localhost:8080";
  EXPECT_EQ(run_cluster_list(options, out, err), kExitUsage);
}

// Issue 42: `job list -o wide` adds the priority, team, group and owner columns to the table.
TEST_F(CliClientTest, JobListWideAddsPriorityTeamGroupAndOwner) {
  EXPECT_EQ(cli({"--server", options.server, "-o", "wide", "job", "list"}), kExitOk) << err.str();
  const std::string header = out.str().substr(0, out.str().find('\n'));
  for (const char* column : {"GPUS", "PRIORITY", "TEAM", "GROUP", "OWNER", "REASON"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column << " in " << header;
  }
  out.str("");
  EXPECT_EQ(cli({"--server", options.server, "job", "list"}), kExitOk) << err.str();
  EXPECT_EQ(out.str().find("PRIORITY"), std::string::npos) << "only with -o wide";
}

TEST_F(CliClientTest, ThroughCli11) {
  EXPECT_EQ(cli({"--server", options.server, "job", "list"}), kExitOk) << err.str();
  EXPECT_NE(out.str().find("llama-8b"), std::string::npos);
  EXPECT_EQ(cli({"job", "show", "1", "--server", options.server, "-o", "json"}), kExitOk)
      << err.str();
  EXPECT_EQ(cli({"job", "show", "9", "--server", options.server}), kExitServerError);
  EXPECT_EQ(cli({"cluster", "outage", "alpha", "--up", "--server", options.server}), kExitOk);
  EXPECT_FALSE(backend.last_down);
  EXPECT_EQ(cli({"cluster", "outage", "alpha", "--server", options.server}), kExitUsage);
  EXPECT_EQ(cli({"cluster", "outage", "alpha", "--up", "--down"}), kExitUsage);
  EXPECT_EQ(cli({"job", "show", "abc"}), kExitUsage);
  EXPECT_EQ(cli({"job", "show", "-1"}), kExitUsage);
  EXPECT_EQ(cli({"job"}), kExitUsage);
  EXPECT_EQ(cli({"-o", "yaml", "job", "list"}), kExitUsage);
  EXPECT_EQ(cli({"--help"}), kExitOk);
  server_->stop();
  EXPECT_EQ(cli({"job", "list", "--server", options.server}), kExitUnreachable);
}

}  // namespace
}  // namespace orch
