// The whole-line rule of a gang's shared output, over a scripted timeline: no processes, no
// sleeps.

#include "agents/line_holder.h"

#include <gmock/gmock.h>

#include <string>
#include <vector>

namespace orch::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class LineHolderTest : public ::testing::Test {
 protected:
  // What one call of feed/on_tick/finish wrote, one element per write().
  std::vector<std::string> feed(std::string_view bytes, std::int64_t now) {
    writes_.clear();
    holder_.feed(bytes, now, sink());
    return writes_;
  }
  std::vector<std::string> tick(std::int64_t now) {
    writes_.clear();
    holder_.on_tick(now, sink());
    return writes_;
  }
  std::vector<std::string> finish() {
    writes_.clear();
    holder_.finish(sink());
    return writes_;
  }
  LineHolder::Sink sink() {
    return [this](std::string_view b) { writes_.emplace_back(b); };
  }

  LineHolder holder_;
  std::vector<std::string> writes_;
};

TEST_F(LineHolderTest, CompleteLinesGoOutAtOnceInOneWrite) {
  EXPECT_THAT(feed("a\nb\n", 0), ElementsAre("a\nb\n"));
  EXPECT_EQ(holder_.next_due_in(0), -1);
  EXPECT_THAT(finish(), IsEmpty());
}

TEST_F(LineHolderTest, APartialLineWaitsForItsNewline) {
  EXPECT_THAT(feed("task0-", 0), IsEmpty());
  EXPECT_THAT(feed("middle-", 10), IsEmpty());
  EXPECT_EQ(holder_.next_due_in(10), 990);  // counted from the line's first byte
  EXPECT_THAT(feed("end\nnext-", 20), ElementsAre("task0-middle-end\n"));
  EXPECT_EQ(holder_.held(), 5u);
  EXPECT_EQ(holder_.next_due_in(20), 1000);  // the next line's first byte came at 20
  EXPECT_THAT(feed("line\n", 30), ElementsAre("next-line\n"));
  EXPECT_EQ(holder_.next_due_in(30), -1);
}

TEST_F(LineHolderTest, APartialLineGoesAsItIsAfterASecond) {
  EXPECT_THAT(feed("progress 10%", 100), IsEmpty());
  EXPECT_THAT(tick(1'099), IsEmpty());
  EXPECT_EQ(holder_.next_due_in(1'099), 1);
  EXPECT_THAT(tick(1'100), ElementsAre("progress 10%"));
  EXPECT_EQ(holder_.next_due_in(1'100), -1);
  // The rest of that line is a new partial line, held from its own first byte.
  EXPECT_THAT(feed(" 20%", 1'500), IsEmpty());
  EXPECT_EQ(holder_.next_due_in(1'500), 1'000);
  EXPECT_EQ(holder_.next_due_in(9'000), 0);  // overdue: due now, never negative
}

TEST_F(LineHolderTest, APartialLineGoesAsItIsAt64KiB) {
  const std::string big(LineHolder::kMaxHeld - 1, 'x');
  EXPECT_THAT(feed(big, 0), IsEmpty());
  auto w = feed("yz", 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], big + "yz");
  EXPECT_EQ(holder_.held(), 0u);
  // After complete lines, a long tail is not kept either.
  w = feed("a\n" + std::string(LineHolder::kMaxHeld, 'q'), 2);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "a\n");
  EXPECT_EQ(w[1].size(), LineHolder::kMaxHeld);
}

TEST_F(LineHolderTest, WhatIsHeldGoesAtTheEnd) {
  EXPECT_THAT(feed("no newline at the end", 0), IsEmpty());
  EXPECT_THAT(finish(), ElementsAre("no newline at the end"));
  EXPECT_THAT(finish(), IsEmpty());
  EXPECT_THAT(feed("", 0), IsEmpty());
}

}  // namespace
}  // namespace orch::agent
