// list + watch with resourceVersion: ordered events after a version, selectors, 410 Expired
// after compaction (as an ERROR event like the real server, or as HTTP 410 on request), dropped
// watches and timeoutSeconds.

#include <gmock/gmock.h>

#include "tests/integration/fake_kube/fake_kube_fixture.h"

namespace orch::fake_kube::testing {
namespace {

long long rv_of(const json& object) {
  return std::stoll(object["metadata"]["resourceVersion"].get<std::string>());
}

class WatchTest : public FakeKubeTest {
 protected:
  void SetUp() override {
    FakeKubeTest::SetUp();
    start_server();
  }

  std::unique_ptr<WatchStream> watch(const std::string& target) {
    std::string error;
    auto w = WatchStream::open(endpoint_, target, error);
    EXPECT_TRUE(w) << error;
    if (w) {
      EXPECT_EQ(w->status(), 200);
    }
    return w;
  }

  // Reads events until pred(event) or the timeout; returns all of them.
  std::vector<json> read_until(WatchStream& w, const std::function<bool(const json&)>& pred,
                               std::chrono::milliseconds timeout = 10000ms) {
    std::vector<json> events;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto e = w.next(200ms);
      if (!e) {
        if (w.ended()) break;
        continue;
      }
      events.push_back(*e);
      if (pred(*e)) return events;
    }
    ADD_FAILURE() << "the awaited event did not come; got " << events.size() << " events";
    return events;
  }

  std::string list_rv(const std::string& target) {
    return get(target)["metadata"]["resourceVersion"];
  }
};

bool pod_succeeded(const json& e) {
  return e["type"] == "MODIFIED" && e["object"]["status"].value("phase", "") == "Succeeded";
}

TEST_F(WatchTest, EventsAfterTheListVersionComeInOrder) {
  const std::string rv0 = list_rv("/api/v1/namespaces/default/pods");
  auto jobs = watch("/apis/batch/v1/namespaces/default/jobs?watch=1&resourceVersion=" + rv0);
  auto pods = watch("/api/v1/namespaces/default/pods?watch=true&resourceVersion=" + rv0 +
                    "&labelSelector=job-name%3Dw1");
  create_job(job("w1", "echo one"));

  const auto job_events = read_until(
      *jobs, [](const json& e) { return e["object"]["status"].value("succeeded", 0) == 1; });
  ASSERT_FALSE(job_events.empty());
  EXPECT_EQ(job_events.front()["type"], "ADDED");
  EXPECT_EQ(job_events.front()["object"]["kind"], "Job");
  EXPECT_EQ(job_events.front()["object"]["metadata"]["name"], "w1");

  const auto pod_events = read_until(*pods, pod_succeeded);
  ASSERT_GE(pod_events.size(), 3u);  // ADDED, scheduled, running..., succeeded
  EXPECT_EQ(pod_events.front()["type"], "ADDED");
  EXPECT_EQ(pod_events.front()["object"]["status"]["phase"], "Pending");
  long long last = std::stoll(rv0);
  bool saw_running = false;
  for (const json& e : pod_events) {
    EXPECT_GT(rv_of(e["object"]), last) << e.dump();
    last = rv_of(e["object"]);
    saw_running |= e["object"]["status"].value("phase", "") == "Running";
  }
  EXPECT_TRUE(saw_running);

  // Resuming from the first pod event gives exactly the rest.
  auto resumed = watch(
      "/api/v1/namespaces/default/pods?watch=1&labelSelector=job-name%3Dw1"
      "&resourceVersion=" +
      pod_events.front()["object"]["metadata"]["resourceVersion"].get<std::string>());
  const auto again = read_until(*resumed, pod_succeeded);
  ASSERT_EQ(again.size(), pod_events.size() - 1);
  for (std::size_t i = 0; i < again.size(); ++i) EXPECT_EQ(again[i], pod_events[i + 1]);
}

TEST_F(WatchTest, SelectorsFilterEvents) {
  const std::string rv0 = list_rv("/apis/batch/v1/namespaces/default/jobs");
  auto by_name = watch("/apis/batch/v1/namespaces/default/jobs?watch=1&resourceVersion=" + rv0 +
                       "&fieldSelector=metadata.name%3Db");
  create_job(job("a", "true"));
  create_job(job("b", "true"));
  const auto events = read_until(*by_name, [](const json&) { return true; });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "b");

  json pods = get("/api/v1/namespaces/default/pods?labelSelector=job-name+in+%28a%29");
  for (const json& p : pods["items"]) EXPECT_EQ(p["metadata"]["labels"]["job-name"], "a");
  json none =
      get("/api/v1/namespaces/default/pods?labelSelector=job-name%21%3Da%2Cjob-name%21%3Db");
  EXPECT_TRUE(none["items"].empty());
}

TEST_F(WatchTest, AWatchWithoutAVersionStartsWithEveryObject) {
  auto stream = watch("/api/v1/nodes?watch=1");
  const auto added = read_until(*stream, [n = 0](const json&) mutable { return ++n == 2; });
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0]["type"], "ADDED");
  EXPECT_EQ(added[1]["object"]["metadata"]["name"], "node-1");
  EXPECT_EQ(call("POST", "/fake/nodes/node-1/notready?keepPods=true").status, 200);
  const auto changed = read_until(*stream, [](const json&) { return true; });
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0]["type"], "MODIFIED");
  EXPECT_EQ(changed[0]["object"]["metadata"]["name"], "node-1");
}

TEST_F(WatchTest, ACompactedVersionIsExpired) {
  const std::string rv0 = list_rv("/apis/batch/v1/namespaces/default/jobs");
  create_job(job("c", "true"));
  const KubeReply compacted = call("POST", "/fake/compact");
  ASSERT_EQ(compacted.status, 200) << compacted.body;
  const std::string now = compacted.json()["resourceVersion"];

  // Like the real server: 200, then one ERROR event with the 410 Status, then the end.
  auto old = watch("/apis/batch/v1/namespaces/default/jobs?watch=1&resourceVersion=" + rv0);
  auto error = old->next(5s);
  ASSERT_TRUE(error);
  EXPECT_EQ((*error)["type"], "ERROR");
  EXPECT_EQ((*error)["object"]["kind"], "Status");
  EXPECT_EQ((*error)["object"]["code"], 410);
  EXPECT_EQ((*error)["object"]["reason"], "Expired");
  EXPECT_FALSE(old->next(2s));
  EXPECT_TRUE(old->ended());

  // A re-list's version is fine.
  const std::string relisted = list_rv("/apis/batch/v1/namespaces/default/jobs");
  EXPECT_GE(std::stoll(relisted), std::stoll(now));
  auto fresh = watch("/apis/batch/v1/namespaces/default/jobs?watch=1&resourceVersion=" + now);
  create_job(job("d", "true"));
  const auto events = read_until(*fresh, [](const json& e) {
    return e["type"] == "ADDED" && e["object"]["metadata"]["name"] == "d";
  });
  for (const json& e : events) EXPECT_NE(e["type"], "ERROR") << e.dump();

  // On request, the plain HTTP 410 form.
  ASSERT_EQ(call("POST", "/fake/compact?http=true").status, 200);
  const KubeReply gone =
      call("GET", "/apis/batch/v1/namespaces/default/jobs?watch=1&resourceVersion=" + rv0);
  EXPECT_EQ(gone.status, 410);
  EXPECT_EQ(gone.json()["reason"], "Expired");
}

TEST_F(WatchTest, DroppedAndTimedOutWatchesEnd) {
  auto a = watch("/api/v1/namespaces/default/pods?watch=1&resourceVersion=" +
                 list_rv("/api/v1/namespaces/default/pods"));
  ASSERT_EQ(call("POST", "/fake/watches/drop").status, 200);
  EXPECT_FALSE(a->next(3s));
  EXPECT_TRUE(a->ended());

  const auto start = std::chrono::steady_clock::now();
  auto b = watch("/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1");
  EXPECT_FALSE(b->next(4s));
  EXPECT_TRUE(b->ended());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

}  // namespace
}  // namespace orch::fake_kube::testing
