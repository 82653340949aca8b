// The checkpoint and data client commands in-process against a real HttpServer over the fake
// backend: checkpoint ls, data ls/add/replicate/transfers (with --watch)/audit, -o json, usage
// and server errors, and the formatters of their tables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/data_commands.h"
#include "cli/data_render.h"
#include "tests/unit/web/cli_server_fixture.h"

namespace orch {
namespace {

using nlohmann::json;

constexpr std::int64_t kNow = 1700000000000 + 3 * 3600 * 1000;  // 3 h after the fake's times

// Every command here goes to the fixture's server.
class DataCliTest : public CliServerTest {
 protected:
  void TearDown() override {
    unsetenv("ORCH_WATCH_ROUNDS");
    CliServerTest::TearDown();
  }
  int cli(std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back(options.server);
    return CliServerTest::cli(std::move(args));
  }
  std::size_t count(const std::string& needle) const {
    std::size_t n = 0;
    const std::string text = out.str();
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }
};

const char* const kTransfersTable =
    "staging for job 2 · 1 queued · 0 B of 0 B\n"
    "ID  WHAT              FROM → TO               STATE   PROGRESS  RATE  CAP  ETA\n"
    "8   dataset imagenet  alpha → beta-long-name  queued  -         -     -    -\n"
    "\n"
    "checkpoint replication of job 1 · 1 running · 675 MB of 1.5 GB · 50 MB/s\n"
    "ID  WHAT                FROM → TO               STATE    PROGRESS                     RATE    "
    " CAP          ETA\n"
    "7   step 1000 of job 1  alpha → beta-long-name  running  [#########...........]  45%  50 MB/s "
    " 25/100 MB/s  17s\n"
    "transfer 7 (try 2): rsync exit 12: connection reset\n";

TEST(DataRenderTest, Formatters) {
  EXPECT_EQ(human_bytes(json(0)), "0 B");
  EXPECT_EQ(human_bytes(json(999)), "999 B");
  EXPECT_EQ(human_bytes(json(1000)), "1 kB");
  EXPECT_EQ(human_bytes(json(1500000000)), "1.5 GB");
  EXPECT_EQ(human_bytes(json(123400000000)), "123 GB");
  EXPECT_EQ(human_bytes(json(999999999)), "1 GB");
  EXPECT_EQ(human_bytes(json(1200000000000)), "1.2 TB");
  EXPECT_EQ(human_bytes(json(nullptr)), "-");
  EXPECT_EQ(human_duration(0), "0s");
  EXPECT_EQ(human_duration(59.4), "59s");
  EXPECT_EQ(human_duration(725), "12m05s");
  EXPECT_EQ(human_duration(3 * 3600 + 20 * 60 + 7), "3h20m");
  EXPECT_EQ(human_duration(4 * 86400 + 6 * 3600), "4d06h");
  EXPECT_EQ(human_duration(-1), "-");
  EXPECT_EQ(progress_bar(json(45)), "[#########...........]  45%");
  EXPECT_EQ(progress_bar(json(0)), "[....................]   0%");
  EXPECT_EQ(progress_bar(json(99.9)), "[###################.]  99%");
  EXPECT_EQ(progress_bar(json(100)), "[####################] 100%");
  EXPECT_EQ(progress_bar(json(150), 4), "[####] 100%");
  EXPECT_EQ(progress_bar(json(nullptr)), "-");
  EXPECT_FALSE(any_transfer_active(json::object()));
  EXPECT_TRUE(any_transfer_active(json{{"transfers", {{{"state", "verifying"}}}}}));
  EXPECT_FALSE(any_transfer_active(json{{"transfers", {{{"state", "failed"}}}}}));
}

TEST_F(DataCliTest, CheckpointTable) {
  json body = backend.job_checkpoints(1).value();
  render_checkpoints(body, kNow, out);
  EXPECT_EQ(out.str(),
            "STEP  SAVED_AT  SIZE    FILES  VERIFIED  COPIES                                 "
            "AGE\n"
            "1000  alpha     1.5 GB  3      yes       alpha:verified beta-long-name:copying  "
            "2h43m\n"
            "500   alpha     -       -      no        alpha:present                          "
            "2h51m\n");
}

TEST_F(DataCliTest, CheckpointLs) {
  EXPECT_EQ(run_checkpoint_ls(options, 1, out, err), kExitOk) << err.str();
  EXPECT_EQ(out.str().rfind("STEP  SAVED_AT  SIZE    FILES  VERIFIED  COPIES", 0), 0u) << out.str();
  EXPECT_TRUE(has("alpha:verified beta-long-name:copying")) << out.str();
  out.str("");
  EXPECT_EQ(cli({"checkpoint", "ls", "2"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "job 2 has no checkpoints yet\n");
  out.str("");
  EXPECT_EQ(cli({"checkpoint", "ls", "1", "-o", "json"}), kExitOk) << err.str();
  json body = json::parse(out.str());
  EXPECT_EQ(body["checkpoints"][0]["files"], 3);
  EXPECT_EQ(cli({"checkpoint", "ls", "9"}), kExitServerError);
  EXPECT_EQ(err.str(), "error: no job with id 9\n");
  EXPECT_EQ(cli({"checkpoint", "ls"}), kExitUsage);
  EXPECT_EQ(cli({"checkpoint", "ls", "0"}), kExitUsage);
}

TEST_F(DataCliTest, DataLs) {
  EXPECT_EQ(cli({"data", "ls"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(),
            "NAME      SIZE    REPLICAS\n"
            "imagenet  1.2 TB  alpha:verified beta-long-name:missing\n"
            "tiny      -       -\n");
  out.str("");
  EXPECT_EQ(cli({"data", "ls", "-o", "json"}), kExitOk);
  EXPECT_EQ(json::parse(out.str())["datasets"].size(), 2u);
  backend.fail = make_error(ErrorKind::io, "disk I/O error");
  EXPECT_EQ(run_data_ls(options, out, err), kExitServerError);
  EXPECT_EQ(err.str(), "error: disk I/O error\n");
}

TEST_F(DataCliTest, DataAdd) {
  EXPECT_EQ(cli({"data", "add", "c4", "--cluster", "alpha", "--path", "/data/c4"}), kExitOk)
      << err.str();
  EXPECT_EQ(out.str(), "dataset c4 registered at alpha:/data/c4; its manifest is computed there\n");
  EXPECT_EQ(backend.last_dataset_path, "/data/c4");
  EXPECT_EQ(cli({"data", "add", "c4", "--cluster", "alpha", "--path", "data/c4"}),
            kExitServerError);
  EXPECT_NE(err.str().find("error: \"path\" must be an absolute path"), std::string::npos)
      << err.str();
  err.str("");
  EXPECT_EQ(cli({"data", "add", "c4", "--cluster", "zeta", "--path", "/x"}), kExitServerError);
  EXPECT_EQ(err.str(),
            "error: no cluster named \"zeta\"; configured: alpha, "
            "beta-long-name\n");
  EXPECT_EQ(cli({"data", "add", "c4", "--cluster", "alpha"}), kExitUsage);
}

TEST_F(DataCliTest, DataReplicate) {
  EXPECT_EQ(cli({"data", "replicate", "imagenet", "--to", "alpha"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(),
            "copying dataset imagenet to alpha\n"
            "transfer 8 started; `orchestrate data transfers --watch` shows its progress\n");
  out.str("");
  EXPECT_EQ(cli({"data", "replicate", "--job", "1", "--to", "beta-long-name"}), kExitOk)
      << err.str();
  EXPECT_EQ(backend.last_replicate.job_id, 1);
  EXPECT_TRUE(has("transfer 7 started")) << out.str();
  out.str("");
  EXPECT_EQ(cli({"data", "replicate", "tiny", "--to", "alpha"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(), "dataset tiny is already verified at alpha\n");
  out.str("");
  EXPECT_EQ(cli({"data", "replicate", "imagenet", "--to", "alpha", "-o", "json"}), kExitOk);
  EXPECT_EQ(json::parse(out.str())["transfer"], 8);
  EXPECT_EQ(cli({"data", "replicate", "--to", "alpha"}), kExitUsage);
  EXPECT_EQ(cli({"data", "replicate", "imagenet", "--job", "1", "--to", "alpha"}), kExitUsage);
  EXPECT_EQ(cli({"data", "replicate", "imagenet"}), kExitUsage);
  EXPECT_EQ(cli({"data", "replicate", "places", "--to", "alpha"}), kExitServerError);
  EXPECT_NE(err.str().find("error: no dataset named \"places\""), std::string::npos) << err.str();
}

TEST_F(DataCliTest, Transfers) {
  TransfersOptions t;
  EXPECT_EQ(run_data_transfers(options, t, out, err), kExitOk) << err.str();
  EXPECT_EQ(out.str(), kTransfersTable);
  EXPECT_FALSE(backend.last_transfer_filter.all);
  out.str("");
  EXPECT_EQ(cli({"data", "transfers", "--all"}), kExitOk) << err.str();
  EXPECT_TRUE(backend.last_transfer_filter.all);
  EXPECT_TRUE(
      has("checkpoint replication of job 1 · 1 running, 1 done · 2.2 GB of 3 GB · "
          "50 MB/s\n"))
      << out.str();
  EXPECT_TRUE(
      has("6   step 500 of job 1   alpha → beta-long-name  done     "
          "[####################] 100%  30 MB/s avg"))
      << "a finished transfer keeps its average rate\n"
      << out.str();
  out.str("");
  EXPECT_EQ(cli({"data", "transfers", "-o", "json"}), kExitOk) << err.str();
  json body = json::parse(out.str());
  ASSERT_EQ(body["transfers"].size(), 2u);
  EXPECT_EQ(body["transfers"][1]["cap_mb_s"], 25.0);
  backend.active_rounds = 0;
  out.str("");
  EXPECT_EQ(cli({"data", "transfers"}), kExitOk);
  EXPECT_EQ(out.str(), "no active or failed transfers (--all shows finished ones)\n");
}

TEST_F(DataCliTest, TransfersComeAPageAtATime) {
  EXPECT_EQ(cli({"data", "transfers", "--all", "--limit", "2"}), kExitOk) << err.str();
  EXPECT_EQ(backend.last_transfer_filter.limit, 2);
  EXPECT_EQ(count("ID  WHAT"), 2u) << "transfers 8 and 7, each in its group\n" << out.str();
  EXPECT_EQ(err.str(), "more transfers: orchestrate data transfers --all --cursor 7\n");
  out.str("");
  err.str("");
  EXPECT_EQ(cli({"data", "transfers", "--all", "--cursor", "7"}), kExitOk) << err.str();
  EXPECT_EQ(backend.last_transfer_filter.cursor, 7);
  EXPECT_TRUE(has("6   step 500 of job 1")) << out.str();
  EXPECT_FALSE(has("step 1000")) << out.str();
  EXPECT_EQ(err.str(), "") << "the last page";
  EXPECT_EQ(cli({"data", "transfers", "--limit", "0"}), kExitUsage);
}

TEST_F(DataCliTest, WatchUntilNoneIsActive) {
  backend.active_rounds = 2;
  EXPECT_EQ(cli({"data", "transfers", "--watch", "--interval", "0.1"}), kExitOk) << err.str();
  EXPECT_EQ(backend.transfer_calls, 3) << "two rounds with active transfers, then none";
  EXPECT_EQ(out.str(), std::string(kTransfersTable) + "\n" + kTransfersTable +
                           "\n"
                           "no active or failed transfers (--all shows finished ones)\n");
  EXPECT_EQ(count("\x1b["), 0u) << "no ANSI when not a terminal";
}

TEST_F(DataCliTest, WatchRoundsAreBounded) {
  setenv("ORCH_WATCH_ROUNDS", "2", 1);
  EXPECT_EQ(cli({"data", "transfers", "--watch", "--interval", "0.1"}), kExitOk) << err.str();
  EXPECT_EQ(backend.transfer_calls, 2);
  EXPECT_EQ(count("ID  WHAT"), 4u) << "two rounds of two groups\n" << out.str();
  unsetenv("ORCH_WATCH_ROUNDS");

  out.str("");
  TransfersOptions t;
  t.watch = true;
  t.interval_ms = 10;
  t.max_rounds = 3;
  t.terminal = true;
  t.all = true;
  EXPECT_EQ(run_data_transfers(options, t, out, err), kExitOk) << err.str();
  EXPECT_EQ(count("\x1b[H\x1b[2J"), 3u) << "the screen is cleared before each table";
  EXPECT_EQ(count("Every 0.01 s, at "), 3u) << out.str();
  EXPECT_TRUE(backend.last_transfer_filter.all);
}

TEST_F(DataCliTest, WatchAsJsonLines) {
  backend.active_rounds = 1;
  options.output = "json";
  TransfersOptions t;
  t.watch = true;
  t.interval_ms = 10;
  EXPECT_EQ(run_data_transfers(options, t, out, err), kExitOk) << err.str();
  std::istringstream lines(out.str());
  std::string line;
  std::vector<json> docs;
  while (std::getline(lines, line)) docs.push_back(json::parse(line));
  ASSERT_EQ(docs.size(), 2u) << out.str();
  EXPECT_EQ(docs[0]["transfers"].size(), 2u);
  EXPECT_EQ(docs[1]["transfers"].size(), 0u);
}

TEST_F(DataCliTest, WatchStopsOnAServerError) {
  backend.fail = make_error(ErrorKind::io, "disk I/O error");
  TransfersOptions t;
  t.watch = true;
  EXPECT_EQ(run_data_transfers(options, t, out, err), kExitServerError);
  EXPECT_EQ(err.str(), "error: disk I/O error\n");
  EXPECT_EQ(cli({"data", "transfers", "--interval", "0"}), kExitUsage);
}

TEST_F(DataCliTest, Audit) {
  EXPECT_EQ(cli({"data", "audit"}), kExitOk) << err.str();
  EXPECT_EQ(out.str(),
            "auditing 3 copies at every cluster; `orchestrate data ls` and `orchestrate "
            "checkpoint ls JOB` show what it finds\n");
  EXPECT_EQ(backend.last_audit_cluster, "");
  EXPECT_EQ(cli({"data", "audit", "--cluster", "alpha"}), kExitOk) << err.str();
  EXPECT_EQ(backend.last_audit_cluster, "alpha");
  EXPECT_EQ(cli({"data", "audit", "--cluster", "zeta"}), kExitServerError);
  EXPECT_NE(err.str().find("no cluster named \"zeta\""), std::string::npos) << err.str();
}

TEST_F(DataCliTest, Help) {
  EXPECT_EQ(cli({"data", "--help"}), kExitOk);
  for (const char* word :
       {"ls", "add", "replicate", "transfers", "audit", "only a verified copy"}) {
    EXPECT_TRUE(has(word)) << word << " in\n" << out.str();
  }
  out.str("");
  EXPECT_EQ(cli({"data", "transfers", "--help"}), kExitOk);
  EXPECT_TRUE(has("--watch")) << out.str();
  EXPECT_TRUE(has("--interval")) << out.str();
  EXPECT_EQ(cli({"data"}), kExitUsage);
  EXPECT_EQ(cli({"checkpoint"}), kExitUsage);
}

}  // namespace
}  // namespace orch
