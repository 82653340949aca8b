// Finding progress protocol lines in the job's output and pulling out step and path.

#include "agents/protocol_scan.h"

#include <gmock/gmock.h>

#include <vector>

namespace orch::agent {
namespace {

using ::testing::ElementsAre;

TEST(ProtocolScan, ReadsProgressAndCheckpointLines) {
  auto p = scan_protocol_line(
      R"(@orchestrate {"event":"progress","step":120,"tokens":8192,"step_time_s":0.21})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->kind, ProtocolLine::Kind::progress);
  EXPECT_EQ(p->step, 120);
  auto c = scan_protocol_line(
      R"(@orchestrate {"event":"checkpoint","step":120,"path":"/ckpt/job-7/step-120.ckpt"})");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, ProtocolLine::Kind::checkpoint);
  EXPECT_EQ(c->step, 120);
  EXPECT_EQ(c->path, "/ckpt/job-7/step-120.ckpt");
}

TEST(ProtocolScan, AcceptsPythonSpacingAndAnyKeyOrder) {
  auto p =
      scan_protocol_line(R"(@orchestrate {"step_time_s": 0.2, "step": 7, "event": "progress"})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->step, 7);
  // "ranks" entries carry "step_time_s" but no "step": the top-level step is the one read.
  auto r = scan_protocol_line(
      R"(@orchestrate {"event":"progress","ranks":[{"rank":0,"step_time_s":0.2}],"step":9})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->step, 9);
}

TEST(ProtocolScan, UnescapesThePath) {
  auto c = scan_protocol_line(
      R"(@orchestrate {"event":"checkpoint","step":1,"path":"/a \"b\"\\c\/d\u00e9\ud83d\ude00"})");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->path, "/a \"b\"\\c/d\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(ProtocolScan, IgnoresWhatIsNotAUsableReport) {
  EXPECT_FALSE(scan_protocol_line("step 5 done").has_value());
  EXPECT_FALSE(scan_protocol_line(R"(@orchestrate{"event":"progress","step":1})").has_value());
  EXPECT_FALSE(scan_protocol_line(R"( @orchestrate {"event":"progress","step":1})").has_value());
  EXPECT_FALSE(scan_protocol_line(R"(@orchestrate {"event":"progress"})").has_value());
  EXPECT_FALSE(scan_protocol_line(R"(@orchestrate {"event":"progress","step":-1})").has_value());
  EXPECT_FALSE(scan_protocol_line(R"(@orchestrate {"event":"progress","step":1.5})").has_value());
  EXPECT_FALSE(scan_protocol_line(R"(@orchestrate {"event":"eval","step":1})").has_value());
  EXPECT_FALSE(scan_protocol_line(R"(@orchestrate {"event":"checkpoint","step":1})").has_value());
  EXPECT_FALSE(
      scan_protocol_line(R"(@orchestrate {"event":"checkpoint","step":1,"path":""})").has_value());
  EXPECT_FALSE(
      scan_protocol_line(R"(@orchestrate {"event":"progress","step":99999999999999999999})")
          .has_value());
  // A step inside a nested object is not the line's step (the server reads it the same way);
  // nor is an event inside one.
  auto nested =
      scan_protocol_line(R"(@orchestrate {"ranks":[{"step":119}],"event":"progress","step":120})");
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->step, 120);
  EXPECT_FALSE(
      scan_protocol_line(R"(@orchestrate {"meta":{"event":"progress","step":1}})").has_value());
  // The key text inside a string value is not the key.
  auto p = scan_protocol_line(R"(@orchestrate {"note":"\"step\"","event":"progress","step":3})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->step, 3);
}

std::vector<std::string> scan_chunks(const std::vector<std::string>& chunks, size_t max = 65536) {
  LineScanner s(max);
  std::vector<std::string> got;
  auto cb = [&](std::string_view line) { got.emplace_back(line); };
  for (const std::string& c : chunks) s.feed(c, cb);
  s.finish(cb);
  return got;
}

TEST(LineScanner, FindsPrefixedLinesAcrossChunkBoundaries) {
  EXPECT_THAT(scan_chunks({"log a\n@orch", "estrate {\"x\":1}\nlog b\n@", "orchestrate {}\r\n"}),
              ElementsAre("@orchestrate {\"x\":1}", "@orchestrate {}"));
  // Byte by byte.
  std::string text = "x\n@orchestrate {\"a\":2}\n@orchestrat\n@orchestrate end";
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  EXPECT_THAT(scan_chunks(bytes), ElementsAre("@orchestrate {\"a\":2}", "@orchestrate end"));
}

TEST(LineScanner, SkipsOrdinaryAndOverlongLines) {
  std::string long_line = "@orchestrate " + std::string(200, 'x');
  EXPECT_THAT(scan_chunks({"plain\n", long_line + "\n", "@orchestrate ok\n"}, 100),
              ElementsAre("@orchestrate ok"));
  EXPECT_TRUE(scan_chunks({"no newline at all, not a protocol line"}).empty());
  EXPECT_TRUE(scan_chunks({"\n\n\n@orchestrate\n"}).empty());
}

}  // namespace
}  // namespace orch::agent
