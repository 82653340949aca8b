// Watch event lines (fixtures/watch-pods.jsonl: one JSON object per line, as the API server
// streams them) and Status bodies.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_status.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using testing::fixture;
using ::testing::HasSubstr;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line + "\n");
  return out;
}

TEST(kube_parse_watch, EventsOfAPodWatch) {
  std::vector<std::string> ls = lines(fixture("watch-pods.jsonl"));
  ASSERT_EQ(ls.size(), 7U);
  std::vector<WatchEvent> events;
  for (const auto& l : ls) {
    auto ev = parse_watch_event(l);
    ASSERT_TRUE(ev.ok()) << ev.error().message;
    events.push_back(*ev);
  }

  EXPECT_EQ(events[0].type, WatchEventType::added);
  EXPECT_EQ(events[0].kind, "Pod");
  EXPECT_EQ(events[0].name, "orch-12-3-mx325f71-q7w2x");
  EXPECT_EQ(events[0].resource_version, "918479");
  EXPECT_FALSE(events[0].gone);

  EXPECT_EQ(events[1].type, WatchEventType::modified);
  EXPECT_EQ(events[1].resource_version, "918480");
  auto pod = parse_pod(events[1].object);  // the object parses on its own
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->phase, "Running");
  EXPECT_EQ(map_attempt({*pod}, std::nullopt).phase, RunPhase::running);

  EXPECT_EQ(events[2].type, WatchEventType::bookmark);
  EXPECT_EQ(events[2].resource_version, "918502");
  EXPECT_EQ(events[2].name, "");

  EXPECT_EQ(events[3].type, WatchEventType::deleted);
  EXPECT_EQ(events[3].resource_version, "918510");
  auto last = parse_pod(events[3].object);
  ASSERT_TRUE(last.ok()) << last.error().message;
  EXPECT_EQ(last->container->exit_code, 143);

  for (int i : {4, 5}) {
    EXPECT_EQ(events[i].type, WatchEventType::error);
    EXPECT_TRUE(events[i].gone) << i;
    ASSERT_TRUE(events[i].status.has_value());
    EXPECT_EQ(events[i].status->code, 410);
    EXPECT_EQ(events[i].status->reason, "Expired");
    EXPECT_EQ(events[i].kind, "Status");
  }
  EXPECT_EQ(events[4].status->message, "too old resource version: 657887 (680402)");

  EXPECT_EQ(events[6].type, WatchEventType::error);
  EXPECT_FALSE(events[6].gone);
  EXPECT_EQ(events[6].status->code, 500);
  EXPECT_EQ(events[6].status->reason, "InternalError");
}

TEST(kube_parse_watch, GoneWithoutACode) {
  auto ev = parse_watch_event(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Gone","message":"gone"}})"
      "\r\n");
  ASSERT_TRUE(ev.ok()) << ev.error().message;
  EXPECT_TRUE(ev->gone);
}

void expect_bad_event(std::string_view line, const std::string& words) {
  auto ev = parse_watch_event(line);
  ASSERT_FALSE(ev.ok()) << "accepted: " << line;
  EXPECT_EQ(ev.error().kind, ErrorKind::invalid);
  EXPECT_THAT(ev.error().message, HasSubstr(words));
}

TEST(kube_parse_watch, Malformed) {
  expect_bad_event("", "empty watch event line");
  expect_bad_event("\n", "empty watch event line");
  expect_bad_event(R"({"type":"ADDED","object":{"kind":"Pod")", "not valid JSON");
  expect_bad_event(R"({"type":"SYNC","object":{}})", "unknown type 'SYNC'");
  expect_bad_event(R"({"object":{}})", "unknown type ''");
  expect_bad_event(R"({"type":"ADDED"})", "without an \"object\"");
  expect_bad_event(R"({"type":"ADDED","object":[]})", "object should be an object");
  expect_bad_event(R"({"type":7,"object":{}})", "type should be a string");
  expect_bad_event(R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{}}})",
                   "BOOKMARK watch event without a resourceVersion");
  expect_bad_event(R"({"type":"ERROR","object":{"kind":"Status","code":"410"}})",
                   "object.code should be an integer");
  expect_bad_event(R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":5}}})",
                   "object.metadata.resourceVersion should be a string");
}

TEST(kube_parse_watch, ListResourceVersion) {
  EXPECT_EQ(*parse_list_resource_version(fixture("pods-empty.json")), "918460");
  EXPECT_EQ(*parse_list_resource_version(fixture("pod-running.json")), "918455");
  auto none = parse_list_resource_version(R"({"kind":"PodList","items":[]})");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("without metadata.resourceVersion"));
  EXPECT_FALSE(parse_list_resource_version("[]").ok());
  EXPECT_FALSE(parse_list_resource_version(R"({"metadata":{"resourceVersion":12}})").ok());
}

TEST(kube_parse_status, StatusBodies) {
  auto exists = parse_api_status(fixture("status-already-exists.json"));
  ASSERT_TRUE(exists.ok()) << exists.error().message;
  EXPECT_EQ(exists->code, 409);
  EXPECT_EQ(exists->reason, "AlreadyExists");
  EXPECT_EQ(exists->message, "jobs.batch \"orch-12-3-mx325f71\" already exists");

  auto invalid = parse_api_status(fixture("status-invalid.json"));
  ASSERT_TRUE(invalid.ok()) << invalid.error().message;
  EXPECT_EQ(invalid->code, 422);
  EXPECT_EQ(invalid->reason, "Invalid");
  EXPECT_THAT(invalid->message, HasSubstr("metadata.name: Invalid value"));

  auto not_status = parse_api_status(fixture("job-running.json"));
  ASSERT_FALSE(not_status.ok());
  EXPECT_THAT(not_status.error().message,
              HasSubstr("expected a Kubernetes Status, got kind 'Job'"));
  EXPECT_FALSE(parse_api_status("502 Bad Gateway").ok());
}

}  // namespace
}  // namespace orch::kube
