#pragma once
// What the brain's fixtures share: an in-memory store, a fake clock, and the reads their tests
// make of the store (a job, its events of one kind).

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/store/store.h"

namespace orch::testing {

class StoreFixture : public ::testing::Test {
 protected:
  // Opens a fresh in-memory store (call from the fixture's start()).
  void open_store() {
    auto s = Store::open(":memory:");
    ASSERT_TRUE(s.ok()) << s.error().message;
    store = std::move(*s);
  }

  JobRow job(JobId id) { return store->job(id).value().value(); }
  std::vector<EventRow> events_of_kind(JobId id, const std::string& kind) {
    std::vector<EventRow> out;
    for (const auto& e : store->events_of(id).value()) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }

  FakeClock clock;
  std::unique_ptr<Store> store;
};

}  // namespace orch::testing
