// Incident keys of the node ledger: entries merge by cause (one attempt, one down episode),
// never by how close in time they are.
#include "scheduler/health/incidents.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::ElementsAre;

constexpr Millis kT0 = 1'700'000'000'000;

IncidentContext under_attempt(const std::string& kind, Millis at, std::int64_t job, int no) {
  IncidentContext c;
  c.kind = kind;
  c.at_ms = at;
  c.job_id = job;
  c.attempt_no = no;
  return c;
}

TEST(Incidents, EachAttemptKilledIsItsOwnIncidentHoweverClose) {
  EXPECT_EQ(incident_key(under_attempt("node-failure", kT0, 7, 1)), "job 7 attempt 1");
  EXPECT_EQ(incident_key(under_attempt("node-failure", kT0 + 1000, 8, 1)), "job 8 attempt 1");
  EXPECT_EQ(incident_key(under_attempt("node-failure", kT0 + 2000, 7, 2)), "job 7 attempt 2");
  // Two entries of one attempt (a GPU error, then its NODE_FAIL) share the key.
  EXPECT_EQ(incident_key(under_attempt("gpu-error", kT0 + 3000, 7, 2)), "job 7 attempt 2");
}

TEST(Incidents, TheSiteMarkingTheNodeDownJoinsTheFailureItHasNotListedSince) {
  IncidentContext c;
  c.kind = "node-unhealthy";
  c.at_ms = kT0 + 5000;
  c.unlisted_failure = "job 7 attempt 1";
  EXPECT_EQ(incident_key(c), "job 7 attempt 1");
  c.unlisted_failure.clear();  // listed healthy since: a new down episode
  EXPECT_EQ(incident_key(c), "down " + std::to_string(kT0 + 5000));
}

TEST(Incidents, EntriesWhileTheNodeIsDownJoinItsEpisode) {
  IncidentContext c = under_attempt("node-failure", kT0 + 9000, 9, 1);
  c.open_episode = "down 1700000005000";
  EXPECT_EQ(incident_key(c), "down 1700000005000");
}

TEST(Incidents, AnEntryNamingNothingIsAnIncidentOfItsOwn) {
  IncidentContext c;
  c.kind = "probe-failed";
  c.at_ms = kT0;
  EXPECT_EQ(incident_key(c), "probe-failed " + std::to_string(kT0));
}

TEST(Incidents, TimesCountOncePerIncidentFromTheFirstEntry) {
  const std::vector<LedgerIncident> ledger = {
      {kT0, "job 1 attempt 1"},
      {kT0 + 1000, "job 1 attempt 1"},  // NODE_FAIL, then down
      {kT0 + 60'000, "job 2 attempt 1"},
      {kT0 + 61'000, "job 2 attempt 1"},
      {kT0 + 62'000, ""},  // no key (written before keys existed): its own
      {kT0 + 63'000, ""},
  };
  EXPECT_THAT(incident_times(ledger, 0),
              ElementsAre(kT0, kT0 + 60'000, kT0 + 62'000, kT0 + 63'000));
  // From a release on, only what followed counts.
  EXPECT_THAT(incident_times(ledger, kT0 + 61'000),
              ElementsAre(kT0 + 61'000, kT0 + 62'000, kT0 + 63'000));
}

}  // namespace
}  // namespace orch
