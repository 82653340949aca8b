// `orchestrate job submit FILE -e KEY=VALUE --set path=value --queue-anyway` (issue 42): what
// reaches the server, recorded by a bare HttpServer that answers every submit with job 5.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include "cli/client_cli.h"
#include "scheduler/spec/job_spec_parser.h"
#include "web/http/http_server.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

class SubmitExtras : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HttpServer>(ServerOptions{"127.0.0.1", 0},
                                           [this](const HttpRequest& request) {
                                             std::lock_guard lock(mu_);
                                             seen_ = request;
                                             HttpResponse r;
                                             r.status = 201;
                                             r.body = R"({"id": 5, "state": "pending"})";
                                             return r;
                                           });
    ASSERT_TRUE(server_->start().ok());
    url_ = "http://127.0.0.1:" + std::to_string(server_->port());
    spec_ = ::testing::TempDir() + "/submit-extras-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml";
    std::ofstream(spec_) << "name: toy\ncommand: echo \"$GREETING\"\n"
                            "resources: {nodes: 1, gpus_per_node: 2}\n";
  }
  int cli(std::vector<std::string> args) {
    CLI::App app{"test", "orchestrate"};
    app.require_subcommand(1);
    add_client_commands(app, out_, err_);
    args.insert(args.begin(), {"orchestrate", "--server", url_});
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    return parse_and_run(app, static_cast<int>(argv.size()), argv.data(), out_, err_);
  }
  HttpRequest seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

  std::mutex mu_;
  HttpRequest seen_;
  std::unique_ptr<HttpServer> server_;
  std::string url_, spec_;
  std::ostringstream out_, err_;
};

TEST_F(SubmitExtras, EnvAndSetFlagsChangeTheSpecThatIsSent) {
  ASSERT_EQ(cli({"job", "submit", spec_, "-e", "GREETING=hello", "--env", "LR=3e-4", "--set",
                 "resources.gpus_per_node=4", "--set", "priority=10"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), "5\n");
  const HttpRequest r = seen();
  EXPECT_EQ(r.path, "/api/v1/jobs");
  EXPECT_EQ(r.query.at("source"), spec_ + " (changed by -e/--set)");
  EXPECT_EQ(r.query.count("queue_anyway"), 0u);
  auto spec = parse_job_spec(r.body, "sent");
  ASSERT_TRUE(spec.ok()) << spec.error().message << "\n" << r.body;
  EXPECT_EQ(spec->env.at("GREETING"), "hello");
  EXPECT_EQ(spec->env.at("LR"), "3e-4");
  EXPECT_EQ(spec->gpus_per_node, 4);
  EXPECT_EQ(spec->priority, 10);
}

TEST_F(SubmitExtras, WithoutFlagsTheFileIsSentAsWritten) {
  ASSERT_EQ(cli({"job", "submit", spec_}), kExitOk) << err_.str();
  EXPECT_EQ(seen().query.at("source"), spec_);
  EXPECT_EQ(seen().body,
            "name: toy\ncommand: echo \"$GREETING\"\nresources: {nodes: 1, gpus_per_node: 2}\n");
}

TEST_F(SubmitExtras, QueueAnywayAsksTheServerToKeepAJobNoClusterCanHold) {
  ASSERT_EQ(cli({"job", "submit", spec_, "--queue-anyway"}), kExitOk) << err_.str();
  EXPECT_EQ(seen().query.at("queue_anyway"), "true");
}

TEST_F(SubmitExtras, AMalformedFlagIsAUsageErrorAndNothingIsSent) {
  EXPECT_EQ(cli({"job", "submit", spec_, "-e", "GREETING"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("-e GREETING: expected KEY=VALUE"));
  EXPECT_EQ(cli({"job", "submit", spec_, "--set", "command.x=1"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--set command.x=1: command is a value"));
  EXPECT_EQ(seen().path, "");
}

}  // namespace
}  // namespace orch
