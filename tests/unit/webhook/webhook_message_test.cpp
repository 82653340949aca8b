// What a webhook is told: which notice is which event, the bodies of both formats, and the
// signature (checked against Python's hmac module: hmac.new(b"key-1", b"1700000000.{...}",
// hashlib.sha256).hexdigest()).
#include <gmock/gmock.h>

#include <nlohmann/json.hpp>

#include "adapters/webhook/webhook_message.h"

namespace orch {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

NoticeRow notice(const std::string& kind) {
  NoticeRow n;
  n.id = 41;
  n.at_ms = 1700000000000;
  n.kind = kind;
  n.message = "failed: exit 1";
  n.job_id = 7;
  n.attempt_no = 2;
  return n;
}

TEST(WebhookMessage, EachNoticeIsTheEventItMeansAndAnEndingWithoutInfraCauseIsNone) {
  EXPECT_EQ(webhook_event_of(notice("succeeded"), std::nullopt), "job-succeeded");
  EXPECT_EQ(webhook_event_of(notice("failed"), std::nullopt), "job-failed");
  EXPECT_EQ(webhook_event_of(notice("attempt-ended"), ExitCause::node_lost), "attempt-infra");
  EXPECT_EQ(webhook_event_of(notice("attempt-ended"), ExitCause::user_error), std::nullopt);
  EXPECT_EQ(webhook_event_of(notice("attempt-ended"), std::nullopt), std::nullopt);
  EXPECT_EQ(webhook_event_of(notice("quarantined"), std::nullopt), "node-quarantined");
  EXPECT_EQ(webhook_event_of(notice("retired"), std::nullopt), "node-retired");
  for (const char* same : {"mfu-drop", "site-down", "checkpoint-lost", "io-stall", "budget"}) {
    EXPECT_EQ(webhook_event_of(notice(same), std::nullopt), same);
  }
  EXPECT_EQ(webhook_event_of(notice("checkpoint"), std::nullopt), std::nullopt);
}

TEST(WebhookMessage, TheJsonBodyCarriesTheNoticeAndSlacksATextLine) {
  WebhookSpec hook;
  const json body = json::parse(webhook_body(hook, notice("failed"), "job-failed"));
  EXPECT_EQ(body["event"], "job-failed");
  EXPECT_EQ(body["id"], 41);
  EXPECT_EQ(body["job_id"], 7);
  EXPECT_EQ(body["attempt_no"], 2);
  EXPECT_EQ(body["message"], "failed: exit 1");
  hook.format = "slack";
  NoticeRow node = notice("quarantined");
  node.job_id.reset();
  node.cluster = "alpha";
  node.node = "a3";
  const json slack = json::parse(webhook_body(hook, node, "node-quarantined"));
  ASSERT_EQ(slack.size(), 1u);
  EXPECT_EQ(slack["text"], "orchestrate: node-quarantined (node a3 of alpha): failed: exit 1");
}

// Issue 41: a failure says what failed, in the body too (its documented keys, and one more).
TEST(WebhookMessage, AFailedJobsBodyCarriesWhatFailed) {
  WebhookSpec hook;
  const std::string excerpt =
      "torchrun: not found\ncommand not found on east-n0 (exit 127): it runs under bash -c";
  const json body = json::parse(webhook_body(hook, notice("failed"), "job-failed", excerpt));
  EXPECT_EQ(body["error_excerpt"], excerpt);
  EXPECT_EQ(body.size(), 9u) << body.dump();
  EXPECT_EQ(json::parse(webhook_body(hook, notice("succeeded"), "job-succeeded"))["error_excerpt"],
            "");
  hook.format = "slack";
  const json slack = json::parse(webhook_body(hook, notice("failed"), "job-failed", "a `b`\nc"));
  EXPECT_EQ(slack["text"], "orchestrate: job-failed (job 7): failed: exit 1\n```a 'b'\nc```");
}

TEST(WebhookMessage, TheSignatureIsHmacSha256OfTimestampDotBody) {
  EXPECT_EQ(webhook_signature("key-1", "1700000000", "{\"event\":\"job-failed\"}"),
            "sha256=37ea8f23ec6d82ea1ac9530b101249b8181e632e412342758e47001798ed7f1d");
  EXPECT_NE(webhook_signature("key-2", "1700000000", "{\"event\":\"job-failed\"}"),
            webhook_signature("key-1", "1700000000", "{\"event\":\"job-failed\"}"));
}

}  // namespace
}  // namespace orch
