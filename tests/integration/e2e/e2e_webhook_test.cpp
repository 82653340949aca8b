// Webhooks on the real server (issue 17): a receiver on loopback that refuses the first two
// tries (503) still gets every event it asked for exactly once, in order of the notices, each
// with a valid HMAC-SHA256 signature (checked with the openssl command, not our code): a job
// that succeeds, one that fails, a node quarantined by hand, and a site that goes down under a
// running job (site-down and the attempt's infrastructure ending).
#include <gmock/gmock.h>

#include <set>

#include "tests/integration/e2e/e2e_fixture.h"
#include "tests/integration/e2e/webhook_receiver.h"

namespace orch::e2e {
namespace {

class WebhookE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    receiver_ = std::make_unique<WebhookReceiver>(2);  // down for the first two tries
    ASSERT_TRUE(receiver_->start());
    keys_ = std::make_unique<TempDir>();
    secret_file_ = keys_->path() + "/hook.key";
    write_file(secret_file_, secret_ + "\n");
    start_with(local_clusters_yaml(2, 2) + "webhooks:\n  - {name: ops, url: '" +
               receiver_->url("/hooks/orchestrate") +
               "', events: [job-succeeded, job-failed, node-quarantined, "
               "site-down, attempt-infra], secret: {file: " +
               secret_file_ + "}}\n");
  }
  void TearDown() override {
    E2eTest::TearDown();
    receiver_.reset();
  }
  std::vector<Delivery> got() { return receiver_->got(); }
  std::multiset<std::string> events() {
    std::multiset<std::string> out;
    for (const auto& d : got()) out.insert(d.event);
    return out;
  }
  // What `openssl dgst -hmac` says the signature of a delivery is.
  std::string openssl_signature(const Delivery& d) {
    const std::string file = keys_->path() + "/signed.txt";
    write_file(file, d.timestamp + "." + d.body);
    ProcessResult r =
        run_process({"/bin/sh", "-c", "openssl dgst -sha256 -hmac \"$0\" < \"$1\"", secret_, file},
                    milliseconds(10000));
    const auto at = r.output.rfind("= ");
    return at == std::string::npos ? r.output : "sha256=" + r.output.substr(at + 2, 64);
  }

  const std::string secret_ = "hook-secret-1f9d3a";
  std::unique_ptr<TempDir> keys_;
  std::string secret_file_;
  std::unique_ptr<WebhookReceiver> receiver_;
};

TEST_F(WebhookE2eTest, AReceiverDownForTwoTriesGetsEveryEventOnceAndSigned) {
  const std::int64_t ok = submit(job_yaml("fine", "--steps 10 --step-delay-ms 10"));
  const std::int64_t bad =
      submit("name: broken\ncommand: 'exit 3'\nresources: {nodes: 1, gpus_per_node: 1}\n" +
             restart_yaml(0));
  ASSERT_EQ(wait_final(ok)["state"], "succeeded");
  ASSERT_EQ(wait_final(bad)["state"], "failed");
  HttpResponse q = call(url_, "POST", "/api/v1/clusters/beta/nodes/beta-n1/quarantine",
                        R"({"reason":"bad cable"})");
  ASSERT_EQ(q.status, 200) << q.body;

  const std::int64_t moved =
      submit(job_yaml("moved", "--steps 200 --step-delay-ms 30 --ckpt-every 10",
                      "placement: {preferred: [alpha]}\n"));
  ASSERT_FALSE(wait_step(moved, 20).is_null());
  ASSERT_EQ(cli({"cluster", "outage", "alpha", "--down"}).exit_code, 0);
  ASSERT_EQ(wait_final(moved)["state"], "succeeded") << describe_job(url_, moved);

  const std::multiset<std::string> want = {"job-succeeded",    "job-succeeded", "job-failed",
                                           "node-quarantined", "site-down",     "attempt-infra"};
  ASSERT_TRUE(eventually([&] { return events().size() >= want.size(); }, milliseconds(60000)))
      << "got " << got().size() << " deliveries";
  std::this_thread::sleep_for(milliseconds(1500));  // anything more would be a repeat
  EXPECT_EQ(events(), want);
  std::set<std::string> ids;
  for (const Delivery& d : got()) {
    EXPECT_TRUE(ids.insert(d.id).second) << "delivery " << d.id << " came twice";
    EXPECT_EQ(d.signature, openssl_signature(d)) << d.body;
    const json body = json::parse(d.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << d.body;
    EXPECT_EQ(body["event"], d.event);
    EXPECT_EQ(std::to_string(body["id"].get<std::int64_t>()), d.id);
  }
  EXPECT_EQ(receiver_->calls(), static_cast<int>(want.size()) + 2)
      << "two refused tries, then one each";
  // The notices came in order.
  std::vector<std::int64_t> order;
  for (const Delivery& d : got()) order.push_back(std::stoll(d.id));
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  const std::string log = read_file(log_path(1));
  EXPECT_THAT(log, ::testing::HasSubstr("not delivered, try 2: the receiver answered HTTP 503"));
  EXPECT_EQ(log.find(secret_), std::string::npos) << "the secret stays out of the log";
}

}  // namespace
}  // namespace orch::e2e
