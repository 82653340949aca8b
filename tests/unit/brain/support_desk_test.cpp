// The support record (issue 15): tickets opened with a cluster's provider, the provider's first
// response and the resolution timed by the brain's clock, and what the scorecard makes of them.
#include <gmock/gmock.h>

#include "scheduler/brain/cluster_history.h"
#include "tests/harness/brain_fixture.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

constexpr Millis kHour = 3'600'000;

class SupportDeskTest : public BrainFixture {
 protected:
  void SetUp() override {
    start({make_cluster("alpha").vendor("acme"), make_cluster("beta").vendor("acme")});
    handle(InventoryObserved{"alpha", SiteInventory{{{"a1", 4, true, ""}, {"a2", 4, true, ""}}}});
  }
  std::int64_t open(const std::string& cluster, const std::string& summary,
                    std::vector<std::string> nodes = {}) {
    auto r = brain->handle(OpenTicket{cluster, summary, std::move(nodes), ""});
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? r->ticket_id : 0;
  }
  Scorecard card(const std::string& name) {
    const std::vector<ClusterSpec> clusters = {make_cluster("alpha").vendor("acme"),
                                               make_cluster("beta").vendor("acme")};
    auto in = gather_scorecard_inputs(*store, clusters, clock.now_ms(), 0).value();
    for (const auto& c : compute_scorecards(in)) {
      if (c.name == name) return c;
    }
    return {};
  }
};

TEST_F(SupportDeskTest, ATicketsResponseAndResolutionAreTimedByTheClock) {
  const Millis t0 = clock.now_ms();
  const std::int64_t id = open("alpha", "a2 loses its IB link every few hours", {"a2"});
  TicketRow t = store->ticket(id).value().value();
  EXPECT_EQ(t.opened_ms, t0);
  EXPECT_EQ(t.nodes, std::vector<std::string>{"a2"});

  clock.advance_ms(kHour);
  handle(NoteTicket{id, "we have asked them twice", false});  // the team's note: no response
  EXPECT_EQ(store->ticket(id).value()->first_response_ms, std::nullopt);
  clock.advance_ms(kHour);
  handle(NoteTicket{id, "looking into it", true});
  clock.advance_ms(kHour);
  handle(NoteTicket{id, "cable ordered", true});  // a later answer changes nothing
  EXPECT_EQ(store->ticket(id).value()->first_response_ms, t0 + 2 * kHour);

  clock.advance_ms(21 * kHour);
  handle(CloseTicket{id, "cable replaced"});
  t = store->ticket(id).value().value();
  EXPECT_EQ(t.resolved_ms, t0 + 24 * kHour);
  EXPECT_EQ(t.resolution, "cable replaced");
  std::vector<std::string> kinds;
  for (const auto& n : store->ticket_notes(id).value()) kinds.push_back(n.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"opened", "note", "provider", "provider", "closed"}));

  open("alpha", "a1 ECC errors");  // still open
  open("beta", "login node slow");
  clock.advance_ms(kHour);
  handle(NoteTicket{store->tickets("beta", std::nullopt, 1).value()[0].id, "on it", true});
  const Scorecard alpha = card("alpha");
  EXPECT_EQ(alpha.tickets, 2);
  EXPECT_EQ(alpha.open_tickets, 1);
  EXPECT_THAT(alpha.ticket_response_median_h, Optional(2.0));
  EXPECT_THAT(alpha.ticket_resolution_median_h, Optional(24.0));
  const Scorecard acme = card("acme");
  EXPECT_EQ(acme.tickets, 3);
  EXPECT_EQ(acme.open_tickets, 2);
  EXPECT_THAT(acme.ticket_response_median_h, Optional(1.5));  // of 2 h and 1 h
}

TEST_F(SupportDeskTest, WhatCannotBeRecordedIsRefusedWithWhy) {
  auto unknown = brain->handle(OpenTicket{"zeta", "x", {}, ""});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  EXPECT_EQ(unknown.error().message, "no cluster \"zeta\"; the clusters are: alpha, beta");
  auto no_node = brain->handle(OpenTicket{"alpha", "x", {"a9"}, ""});
  ASSERT_FALSE(no_node.ok());
  EXPECT_EQ(no_node.error().message, "cluster alpha has no node \"a9\"; its nodes: a1, a2");
  auto empty = brain->handle(OpenTicket{"alpha", "  ", {}, ""});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, ErrorKind::invalid);
  auto huge = brain->handle(OpenTicket{"alpha", std::string(2001, 'x'), {}, ""});
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.error().message, HasSubstr("longer than 2000 bytes"));

  const std::int64_t id = open("alpha", "a1 is slow");
  EXPECT_EQ(brain->handle(NoteTicket{id + 1, "x", false}).error().kind, ErrorKind::not_found);
  EXPECT_EQ(brain->handle(NoteTicket{id, "", false}).error().kind, ErrorKind::invalid);
  handle(CloseTicket{id, ""});
  auto twice = brain->handle(CloseTicket{id, ""});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().kind, ErrorKind::conflict);
  EXPECT_EQ(twice.error().message, "ticket 1 (alpha) is already closed");
  EXPECT_EQ(brain->handle(NoteTicket{id, "late", true}).error().kind, ErrorKind::conflict);
}

}  // namespace
}  // namespace orch::testing
