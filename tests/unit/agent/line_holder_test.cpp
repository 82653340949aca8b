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

// A gang's task: every line carries the task's tag once, at its start.
class TaggedLineHolderTest : public LineHolderTest {
 protected:
  TaggedLineHolderTest() { holder_ = LineHolder("[n1/3] "); }
};

TEST_F(TaggedLineHolderTest, EveryLineOfAWriteIsTagged) {
  EXPECT_THAT(feed("a\nb\n", 0), ElementsAre("[n1/3] a\n[n1/3] b\n"));
  EXPECT_THAT(feed("\n", 1), ElementsAre("[n1/3] \n"));  // an empty line is a line too
  EXPECT_THAT(finish(), IsEmpty());
}

TEST_F(TaggedLineHolderTest, AHeldLineIsTaggedOnceAtItsStart) {
  EXPECT_THAT(feed("@orchestrate {\"event\":", 0), IsEmpty());
  EXPECT_THAT(feed("\"progress\",\"step\":1}\nnext", 10),
              ElementsAre("[n1/3] @orchestrate {\"event\":\"progress\",\"step\":1}\n"));
  EXPECT_THAT(feed("\n", 20), ElementsAre("[n1/3] next\n"));
}

// A partial line let go after a second carries the tag; the rest of that line, when it comes, is
// the same line and is not tagged again (where no other task wrote in between, the shared file
// shows "[n1/3] progress 10% 20%"); the line after it is.
TEST_F(TaggedLineHolderTest, TheContinuationOfALineLetGoEarlyIsNotTaggedAgain) {
  EXPECT_THAT(feed("progress 10%", 100), IsEmpty());
  EXPECT_THAT(tick(1'100), ElementsAre("[n1/3] progress 10%"));
  EXPECT_THAT(feed(" 20%", 1'500), IsEmpty());
  EXPECT_THAT(tick(2'500), ElementsAre(" 20%"));
  EXPECT_THAT(feed(" done\nafter\n", 2'600), ElementsAre(" done\n[n1/3] after\n"));
}

TEST_F(TaggedLineHolderTest, ALineLetGoAt64KiBIsTaggedOnce) {
  const std::string big(LineHolder::kMaxHeld, 'x');
  auto w = feed(big, 0);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "[n1/3] " + big);
  EXPECT_THAT(feed("y\n", 1), ElementsAre("y\n"));
}

// At the end, a tagged last line without its newline gets one, in the same write, so that the
// next task's line still starts with its own tag.
TEST_F(TaggedLineHolderTest, TheLastLineIsEndedAtTheFinish) {
  EXPECT_THAT(feed("no newline at the end", 0), IsEmpty());
  EXPECT_THAT(finish(), ElementsAre("[n1/3] no newline at the end\n"));
  EXPECT_THAT(finish(), IsEmpty());
  // A line let go early and never continued is ended too.
  EXPECT_THAT(feed("prompt", 0), IsEmpty());
  EXPECT_THAT(tick(1'000), ElementsAre("[n1/3] prompt"));
  EXPECT_THAT(finish(), ElementsAre("\n"));
}

}  // namespace
}  // namespace orch::agent
