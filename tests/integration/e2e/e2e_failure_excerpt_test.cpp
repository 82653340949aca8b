// A failure says what failed (issue 41, item 6), on the real server with local sites: a job
// whose command is not found shows the shell's words and the hint in `job list`'s REASON, in
// `job show`, in the job's JSON and in the job-failed webhook's body; a Python traceback's
// exception is the excerpt's first line; a user's cancel of a running gang of 2 nodes x 2 tasks
// ends every attempt `cancelled`, names no failed node and leaves the node ledger empty.
#include <gmock/gmock.h>

#include "tests/integration/e2e/e2e_fixture.h"
#include "tests/integration/e2e/webhook_receiver.h"

namespace orch::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class FailureExcerptE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    receiver_ = std::make_unique<WebhookReceiver>();
    ASSERT_TRUE(receiver_->start());
    keys_ = std::make_unique<TempDir>();
    const std::string secret = keys_->path() + "/hook.key";
    write_file(secret, "hook-secret-41\n");
    start_with(local_clusters_yaml(2, 2) + "webhooks:\n  - {name: ops, url: '" +
               receiver_->url("/hook") + "', events: [job-failed], secret: {file: " + secret +
               "}}\n");
  }
  void TearDown() override {
    E2eTest::TearDown();
    receiver_.reset();
  }
  // The body of the job-failed delivery for job `id`, once it came.
  json failed_body(std::int64_t id) {
    json found;
    eventually(
        [&] {
          for (const Delivery& d : receiver_->got()) {
            json body = json::parse(d.body, nullptr, false);
            if (body.is_object() && body["job_id"] == id) found = body;
          }
          return !found.is_null();
        },
        milliseconds(30000));
    return found;
  }
  std::string one_slot_job(const std::string& name, const std::string& command) const {
    return "name: " + name + "\ncommand: " + command +
           "\nresources: {nodes: 1, gpus_per_node: 1}\n" + restart_yaml(0);
  }

  std::unique_ptr<TempDir> keys_;
  std::unique_ptr<WebhookReceiver> receiver_;
};

TEST_F(FailureExcerptE2eTest, ACommandNotFoundIsNamedInTheListTheShowTheJsonAndTheWebhook) {
  const std::int64_t id = submit(one_slot_job("notfound", "nosuchtrainer41 --epochs 1"));
  ASSERT_GT(id, 0);
  json done = wait_final(id);
  ASSERT_EQ(done["state"], "failed") << describe_job(url_, id);
  json a1 = attempts(id).at(0);
  const std::string node = a1["nodes"].at(0).get<std::string>();

  // The JSON: the attempt's excerpt and the job's (the newest failed attempt's).
  const std::string excerpt = a1["error_excerpt"].get<std::string>();
  EXPECT_THAT(excerpt, StartsWith("nosuchtrainer41: ")) << excerpt;
  EXPECT_THAT(excerpt, HasSubstr("not found\ncommand not found on " + node +
                                 " (exit 127): it "
                                 "runs under bash -c"))
      << excerpt;
  EXPECT_EQ(done["error_excerpt"], excerpt);
  EXPECT_THAT(done["reason"].get<std::string>(), StartsWith("user_error: nosuchtrainer41: "));
  EXPECT_THAT(done["reason"].get<std::string>(), HasSubstr("; user restart budget spent (0 of 0)"));

  ProcessResult list = cli({"job", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_THAT(list.output, HasSubstr("user_error: nosuchtrainer41: ")) << list.output;
  ProcessResult show = cli({"job", "show", std::to_string(id)});
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_THAT(show.output, HasSubstr("What failed\n  attempt 1 (user_error):\n"
                                     "    nosuchtrainer41: "))
      << show.output;
  EXPECT_THAT(show.output, HasSubstr("    command not found on " + node + " (exit 127)"))
      << show.output;

  json hook = failed_body(id);
  ASSERT_FALSE(hook.is_null()) << "no job-failed delivery";
  EXPECT_EQ(hook["event"], "job-failed");
  EXPECT_EQ(hook["error_excerpt"], excerpt);
  EXPECT_THAT(hook["message"].get<std::string>(), HasSubstr("user_error: nosuchtrainer41: "));
}

TEST_F(FailureExcerptE2eTest, APythonTracebacksExceptionLeadsTheExcerpt) {
  const std::int64_t id = submit(one_slot_job(
      "traceback",
      "python3 -c 'print(\"loading\", flush=True); raise ValueError(\"bad shape (3, 4)\")'"));
  ASSERT_GT(id, 0);
  json done = wait_final(id);
  ASSERT_EQ(done["state"], "failed") << describe_job(url_, id);
  const std::string excerpt = done["error_excerpt"].get<std::string>();
  EXPECT_THAT(excerpt, StartsWith("ValueError: bad shape (3, 4)\n")) << excerpt;
  EXPECT_THAT(excerpt, HasSubstr("Traceback (most recent call last):")) << excerpt;
  EXPECT_EQ(done["reason"],
            "user_error: ValueError: bad shape (3, 4); user restart budget spent "
            "(0 of 0)");
}

TEST_F(FailureExcerptE2eTest, AUsersCancelOfARunningGangIsCancelledOnEveryAttemptAndBlamesNoNode) {
  const std::int64_t id = submit(
      "name: gang\ncommand: 'while true; do echo tick; sleep 0.2; done'\n"
      "resources: {nodes: 2, gpus_per_node: 2, tasks_per_node: 2}\n" +
      restart_yaml(0));
  ASSERT_GT(id, 0);
  ASSERT_FALSE(wait_job(
                   id, [](const json& j) { return j["state"] == "running"; }, "run")
                   .is_null())
      << describe_job(url_, id);
  std::this_thread::sleep_for(milliseconds(500));  // every task prints a line or two
  ProcessResult cancel = cli({"job", "cancel", std::to_string(id)});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.output;
  json done = wait_final(id);
  EXPECT_EQ(done["state"], "cancelled");
  // The site reports the gang's end (its tasks killed by the cancel's TERM): wait for it.
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& a : attempts(id)) {
          if (a["state"] != "exited") return false;
        }
        return true;
      },
      milliseconds(30000)))
      << describe_job(url_, id);
  std::this_thread::sleep_for(milliseconds(1000));  // a late observation would show by now
  const json list = attempts(id);
  ASSERT_EQ(list.size(), 1u) << list.dump();
  std::set<std::string> clusters;
  for (const auto& a : list) {
    EXPECT_EQ(a["cause"], "cancelled") << a.dump();
    EXPECT_TRUE(a["failed_node"].is_null()) << "FAILED ON names no node: " << a.dump();
    EXPECT_EQ(a["error_excerpt"], "") << a.dump();
    clusters.insert(a["cluster"].get<std::string>());
  }
  for (const auto& c : clusters) {
    json ledger = get_json(url_, "/api/v1/clusters/" + c + "/nodes");
    ASSERT_TRUE(ledger.contains("events")) << ledger.dump();
    EXPECT_TRUE(ledger["events"].empty()) << "a cancel leaves no node event: " << ledger.dump();
    for (const auto& n : ledger["nodes"]) EXPECT_EQ(n["state"], "active") << n.dump();
  }
  ProcessResult show = cli({"job", "show", std::to_string(id)});
  EXPECT_THAT(show.output, ::testing::Not(HasSubstr("What failed"))) << show.output;
  // Its tasks died of the cancel's TERM (signal 15 on a node): that is no task failing first.
  EXPECT_EQ(list[0]["signal"], 15) << list.dump();
  json events = get_json(url_, "/api/v1/jobs/" + std::to_string(id) + "/events");
  for (const auto& e : events["events"]) {
    EXPECT_THAT(e["message"].get<std::string>(), ::testing::Not(HasSubstr("failed first")))
        << e.dump();
  }
}

}  // namespace
}  // namespace orch::e2e
