// Support tickets in the store: what each filter returns, the window's tickets, the history.
#include <gmock/gmock.h>

#include "scheduler/store/store.h"

namespace orch {
namespace {

class StoreTicketsTest : public ::testing::Test {
 protected:
  void SetUp() override { store = std::move(Store::open(":memory:").value()); }
  std::int64_t add(const std::string& cluster, Millis opened, std::optional<Millis> resolved) {
    TicketRow t;
    t.cluster = cluster;
    t.summary = "s";
    t.nodes = {"n1", "n2"};
    t.opened_ms = opened;
    t.resolved_ms = resolved;
    return store->insert_ticket(t).value();
  }
  std::vector<std::int64_t> ids(const std::vector<TicketRow>& rows) {
    std::vector<std::int64_t> out;
    for (const auto& r : rows) out.push_back(r.id);
    return out;
  }
  std::unique_ptr<Store> store;
};

TEST_F(StoreTicketsTest, FiltersByClusterAndStateNewestFirst) {
  const auto a1 = add("alpha", 100, 200);
  const auto a2 = add("alpha", 300, std::nullopt);
  const auto b1 = add("beta", 400, std::nullopt);
  using ::testing::ElementsAre;
  EXPECT_THAT(ids(store->tickets("", std::nullopt, 10).value()), ElementsAre(b1, a2, a1));
  EXPECT_THAT(ids(store->tickets("alpha", std::nullopt, 10).value()), ElementsAre(a2, a1));
  EXPECT_THAT(ids(store->tickets("alpha", true, 10).value()), ElementsAre(a2));
  EXPECT_THAT(ids(store->tickets("", false, 10).value()), ElementsAre(a1));
  EXPECT_THAT(ids(store->tickets("", std::nullopt, 1).value()), ElementsAre(b1));
  // From 250 on: a1 ended before, a2 and b1 are in it.
  EXPECT_THAT(ids(store->tickets_since(250).value()), ElementsAre(a2, b1));
  EXPECT_THAT(ids(store->tickets_since(150).value()), ElementsAre(a1, a2, b1));
  const TicketRow t = store->ticket(a1).value().value();
  EXPECT_EQ(t.nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(t.resolved_ms, 200);
  EXPECT_FALSE(store->ticket(99).value().has_value());
}

TEST_F(StoreTicketsTest, NotesComeBackInOrder) {
  const auto id = add("alpha", 100, std::nullopt);
  ASSERT_TRUE(store->add_ticket_note({0, id, 100, "opened", "s"}).ok());
  ASSERT_TRUE(store->add_ticket_note({0, id, 150, "provider", "on it"}).ok());
  auto notes = store->ticket_notes(id).value();
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[1].kind, "provider");
  EXPECT_EQ(notes[1].at_ms, 150);
  EXPECT_FALSE(store->add_ticket_note({0, 99, 150, "note", "x"}).ok()) << "no such ticket";
}

}  // namespace
}  // namespace orch
