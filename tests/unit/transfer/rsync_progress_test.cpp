// The rsync progress parser (adapters/transfer/rsync_progress.h) on output captured from real
// rsync 3.5.0 (fixtures/README.md says how), fed whole and in every cut.
#include "adapters/transfer/rsync_progress.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace orch::transfer {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(ORCH_SOURCE_DIR) + "/tests/unit/transfer/fixtures/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr double kMiB = 1024.0 * 1024.0;

TEST(RsyncProgressLine, ReadsBytesPercentRateAndFilesLeft) {
  auto line =
      parse_progress_line("     32,768,000  62%   31.25MB/s    0:00:01 (xfr#1, to-chk=0/1)");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->bytes, 32768000u);
  EXPECT_EQ(line->percent, 62);
  EXPECT_DOUBLE_EQ(line->rate_bytes_per_s, 31.25 * kMiB);
  EXPECT_EQ(line->files_to_check, 0);
  EXPECT_EQ(line->files_total, 1);
}

TEST(RsyncProgressLine, AnInProgressLineHasNoFileCounts) {
  auto line = parse_progress_line("     10,878,976  31%    9.66MB/s    0:00:02  ");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->bytes, 10878976u);
  EXPECT_EQ(line->files_to_check, -1);
}

TEST(RsyncProgressLine, RateUnitsAreBinaryAsRsyncPrintsThem) {
  EXPECT_DOUBLE_EQ(*parse_rsync_rate("0.00kB/s"), 0.0);
  EXPECT_DOUBLE_EQ(*parse_rsync_rate("118.19kB/s"), 118.19 * 1024);
  EXPECT_DOUBLE_EQ(*parse_rsync_rate("9.77MB/s"), 9.77 * kMiB);
  // GB/s needs more than 1 GiB/s, which this machine's disks never reach: rsync's format.
  EXPECT_DOUBLE_EQ(*parse_rsync_rate("1.50GB/s"), 1.5 * 1024 * kMiB);
  EXPECT_DOUBLE_EQ(*parse_rsync_rate("9,77MB/s"), 9.77 * kMiB);  // a ',' decimal point locale
  EXPECT_FALSE(parse_rsync_rate("fastMB/s"));
  EXPECT_FALSE(parse_rsync_rate("9.77"));
  EXPECT_FALSE(parse_rsync_rate("9.77TB/x"));
}

TEST(RsyncProgressLine, IgnoresWhatIsNotProgress) {
  EXPECT_FALSE(parse_progress_line(""));
  EXPECT_FALSE(parse_progress_line("sending incremental file list"));
  EXPECT_FALSE(parse_progress_line(
      "rsync error: some files/attrs were not transferred (see previous errors) (code 23)"));
  EXPECT_FALSE(parse_progress_line("Total bytes sent: 24,006,072"));
  EXPECT_FALSE(parse_progress_line("     10,878,976  31%    9.66MB/s"));  // cut short
  EXPECT_FALSE(parse_progress_line("     10,878,976  131%    9.66MB/s    0:00:02"));
  EXPECT_FALSE(parse_progress_line("  ,878,976  31%    9.66MB/s    0:00:02"));
  EXPECT_FALSE(parse_progress_line("99999999999999999999999  31%    9.66MB/s    0:00:02"));
}

TEST(RsyncProgressParser, ReadsALocalDirectoryCopyToItsLastRecord) {
  RsyncProgressParser parser;
  EXPECT_TRUE(parser.feed(fixture("local_dir_bwlimit.out")));
  ASSERT_TRUE(parser.latest());
  EXPECT_EQ(parser.latest()->bytes, 35000003u);
  EXPECT_EQ(parser.latest()->percent, 100);
  EXPECT_DOUBLE_EQ(parser.latest()->rate_bytes_per_s, 9.77 * kMiB);  // --bwlimit=10000 KiB/s
  EXPECT_EQ(parser.latest()->files_to_check, 0);
  EXPECT_EQ(parser.latest()->files_total, 5);
}

TEST(RsyncProgressParser, ReadsEveryCapturedRunWhateverTheCuts) {
  struct Case {
    const char* file;
    std::uint64_t bytes;
    int percent;
  };
  for (const Case& c :
       {Case{"local_dir_bwlimit.out", 35000003u, 100},
        Case{"local_file_fast.out", 1500000000u, 100}, Case{"local_kb_rate.out", 600000u, 100},
        Case{"pull_over_ssh.out", 48000000u, 100}, Case{"pull_interrupted.out", 25310720u, 52},
        Case{"pull_resumed.out", 24000000u, 50}}) {
    const std::string text = fixture(c.file);
    // Cut into pieces of every size from 1 byte to 40: a record split across reads is read
    // once, whole, and the last one wins.
    for (std::size_t piece = 1; piece <= 40; ++piece) {
      RsyncProgressParser parser;
      for (std::size_t at = 0; at < text.size(); at += piece) parser.feed(text.substr(at, piece));
      ASSERT_TRUE(parser.latest()) << c.file;
      EXPECT_EQ(parser.latest()->bytes, c.bytes) << c.file << " in pieces of " << piece;
      EXPECT_EQ(parser.latest()->percent, c.percent) << c.file;
    }
  }
}

TEST(RsyncProgressParser, KilobyteRatesOfASlowCopy) {
  const std::string text = fixture("local_kb_rate.out");
  RsyncProgressParser parser;
  // The records in the order rsync printed them: bytes never go down, rates are in kB/s.
  std::uint64_t last = 0;
  std::size_t start = 0;
  int records = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r' && text[i] != '\n') continue;
    if (parser.feed(text.substr(start, i + 1 - start))) {
      ++records;
      EXPECT_GE(parser.latest()->bytes, last);
      last = parser.latest()->bytes;
      EXPECT_LT(parser.latest()->rate_bytes_per_s, 200 * 1024.0);  // --bwlimit=100
    }
    start = i + 1;
  }
  EXPECT_GE(records, 5);
  EXPECT_EQ(last, 600000u);
}

TEST(RsyncProgressParser, ARecordCutWithinItsFieldsWaitsForTheRest) {
  RsyncProgressParser parser;
  EXPECT_FALSE(parser.feed("\r     10,878"));     // the byte count may go on
  EXPECT_FALSE(parser.feed(",976  31%    9.6"));  // so may the rate
  EXPECT_FALSE(parser.latest());
  EXPECT_TRUE(parser.feed("6MB/s    0:00:02  "));
  EXPECT_EQ(parser.latest()->bytes, 10878976u);
  EXPECT_DOUBLE_EQ(parser.latest()->rate_bytes_per_s, 9.66 * kMiB);
}

TEST(RsyncProgressParser, AKilledRsyncsLastRecordCounts) {
  // rsync starts each record with '\r': the one it wrote before SIGTERM has no end.
  RsyncProgressParser parser;
  parser.feed(fixture("pull_interrupted.out"));
  EXPECT_EQ(parser.latest()->bytes, 25310720u);
  EXPECT_EQ(parser.latest()->percent, 52);
}

TEST(RsyncProgressParser, AFailedRunReportsNothingCopied) {
  RsyncProgressParser parser;
  parser.feed(fixture("missing_source.out"));
  EXPECT_FALSE(parser.feed(fixture("missing_source.err")));  // stderr holds no progress
  // rsync found no files: 0 bytes of an empty list, which it calls 100%.
  ASSERT_TRUE(parser.latest());
  EXPECT_EQ(parser.latest()->bytes, 0u);
  EXPECT_EQ(parser.latest()->files_total, 0);
}

}  // namespace
}  // namespace orch::transfer
