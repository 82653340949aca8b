// Issue 37's fair use on the real server: 64 clients of one `user` token flooding submissions
// get 429s with Retry-After (and no other refusal), while another token's reads all succeed;
// the flood's 429s cost the audit log a row, not a row each, and GET /metrics counts them. What
// this asserts is behaviour; the reads' latency is bench/bench_fair_use.cpp's.
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

constexpr int kFloodClients = 64;
constexpr int kMaxPerClient = 40;  // bounded by count as well as time
const milliseconds kFloodTime{3000};

class FairUseE2eTest : public E2eTest {
 protected:
  // A new token of `role` for name, made with the admin token.
  std::string make_token(const std::string& name, const std::string& role) {
    const json body = {{"name", name}, {"role", role}, {"teams", {"vision"}}};
    HttpResponse r = call(url_, "POST", "/api/v1/tokens", body.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    json j = json::parse(r.body, nullptr, false);
    return j.is_object() ? j.value("token", "") : "";
  }
};

struct FloodTally {
  std::mutex mu;
  std::map<int, int> by_status;
  std::vector<std::string> bad_retry_after;  // 429s whose Retry-After is not whole seconds >= 1
  std::string first_other;                   // the first answer neither 201 nor 429
};

TEST_F(FairUseE2eTest, OneTokensFloodGets429sWhileAnotherTokensReadsAllSucceed) {
  const std::string alice = make_token("alice", "user");
  const std::string bob = make_token("bob", "user");
  ASSERT_FALSE(alice.empty());
  ASSERT_FALSE(bob.empty());
  const std::string job =
      "name: flood\ncommand: /bin/true\nresources: {nodes: 1, gpus_per_node: 1}\n";

  FloodTally flood;
  std::atomic<bool> done{false};
  std::map<int, int> reads;  // bob's answers by status
  std::string first_bad_read;
  std::thread reader([&] {
    while (!done) {
      HttpResponse r = call_as(url_, bob, "GET", "/api/v1/jobs?limit=20");
      ++reads[r.status];
      if (r.status != 200 && first_bad_read.empty()) first_bad_read = r.body;
    }
  });
  const auto deadline = SteadyClock::now() + kFloodTime;
  std::vector<std::thread> clients;
  for (int c = 0; c < kFloodClients; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < kMaxPerClient && SteadyClock::now() < deadline; ++i) {
        HttpResponse r = call_as(url_, alice, "POST", "/api/v1/jobs", job, "application/yaml");
        std::lock_guard<std::mutex> lock(flood.mu);
        ++flood.by_status[r.status];
        const std::string retry = r.header("Retry-After");
        if (r.status == 429 && (retry.empty() || std::atoi(retry.c_str()) < 1 ||
                                retry.find_first_not_of("0123456789") != std::string::npos)) {
          flood.bad_retry_after.push_back(retry);
        }
        if (r.status != 201 && r.status != 429 && flood.first_other.empty()) {
          flood.first_other = std::to_string(r.status) + ": " + r.body;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  done = true;
  reader.join();

  const int accepted = flood.by_status[201];
  const int limited = flood.by_status[429];
  EXPECT_GT(accepted, 0);
  EXPECT_GT(limited, 0) << "the flood was never limited";
  EXPECT_EQ(accepted + limited,
            [&] {
              int n = 0;
              for (const auto& [status, count] : flood.by_status) n += count;
              return n;
            }())
      << "only 201 or 429: " << flood.first_other;
  EXPECT_TRUE(flood.bad_retry_after.empty()) << flood.bad_retry_after.front();
  // The default user rate: 40 at once, then 10 a second (with room for a slow machine).
  EXPECT_LE(accepted, 40 + 10 * 10);

  int read_total = 0;
  for (const auto& [status, count] : reads) read_total += count;
  EXPECT_GT(read_total, 0);
  EXPECT_EQ(reads[200], read_total) << "bob's reads must all succeed: " << first_bad_read;

  // Bob's changes are his own bucket's.
  EXPECT_EQ(call_as(url_, bob, "POST", "/api/v1/jobs", job, "application/yaml").status, 201);

  // The 429s are counted, and cost the audit log a row a minute, not a row each.
  HttpResponse metrics = call(url_, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("orchestrate_refused_requests_total{status=\"429\"} " +
                              std::to_string(limited) + "\n"),
            std::string::npos)
      << metrics.body;
  json audit = get_json(url_, "/api/v1/audit?limit=1000");
  ASSERT_TRUE(audit.is_object());
  int rows_429 = 0, rows_ok = 0;
  for (const auto& e : audit["entries"]) {
    if (e["user"] != "alice") continue;
    rows_429 += e["status"] == 429 ? 1 : 0;
    rows_ok += e["status"] == 201 ? 1 : 0;
  }
  EXPECT_EQ(rows_429, 1) << "the first 429 is written; the rest wait for the minute's count";
  EXPECT_EQ(rows_ok, accepted) << "every accepted change is a row";
}

}  // namespace
}  // namespace orch::e2e
