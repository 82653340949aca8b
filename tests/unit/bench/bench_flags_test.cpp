// parse_flags: --help prints the usage and gives 0, unknown flags and bad values give 2, good
// values are set; and the built benchmarks use it (bench_brain --help used to run the benchmark).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace orch::bench {
namespace {

using ::testing::HasSubstr;

struct Parsed {
  std::optional<int> rc;
  std::string out, err;
  int runs = 5;
  double seconds = 10;
};

Parsed parse(std::vector<std::string> args) {
  Parsed p;
  args.insert(args.begin(), "bench_x");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  p.rc = parse_flags(static_cast<int>(argv.size()), argv.data(), "bench_x", "What it measures.",
                     {{"--runs", "N", "runs (default 5)", 0, 100, true,
                       [&](double v) { p.runs = static_cast<int>(v); }},
                      {"--seconds", "S", "seconds per run (default 10)", 0.5, 60, false,
                       [&](double v) { p.seconds = v; }}},
                     out, err);
  p.out = out.str();
  p.err = err.str();
  return p;
}

TEST(BenchFlags, HelpPrintsTheUsageAndExitsZero) {
  for (const char* help : {"--help", "-h"}) {
    Parsed p = parse({"--runs", "3", help});
    EXPECT_EQ(p.rc, 0);
    EXPECT_EQ(p.out,
              "usage: bench_x [--runs N] [--seconds S] [--help]\n"
              "What it measures.\n"
              "  --runs N     runs (default 5)\n"
              "  --seconds S  seconds per run (default 10)\n");
    EXPECT_EQ(p.err, "");
    EXPECT_EQ(p.runs, 5) << "nothing is set when the usage is asked for";
  }
}

TEST(BenchFlags, GoodValuesAreSetAndTheBenchmarkRuns) {
  Parsed p = parse({"--runs", "0", "--seconds", "2.5"});
  EXPECT_EQ(p.rc, std::nullopt);
  EXPECT_EQ(p.runs, 0);
  EXPECT_EQ(p.seconds, 2.5);
  EXPECT_EQ(parse({}).rc, std::nullopt);
}

TEST(BenchFlags, BadArgumentsExitTwoWithTheReasonAndTheUsage) {
  struct Case {
    std::vector<std::string> args;
    std::string why;
  };
  const Case cases[] = {
      {{"--bogus"}, "bench_x: unknown argument '--bogus'"},
      {{"extra"}, "bench_x: unknown argument 'extra'"},
      {{"--runs"}, "bench_x: --runs needs a value (N)"},
      {{"--runs", "two"}, "bench_x: --runs wants a whole number from 0 to 100, got 'two'"},
      {{"--runs", "1.5"}, "--runs wants a whole number from 0 to 100, got '1.5'"},
      {{"--runs", "101"}, "got '101'"},
      {{"--seconds", "0.1"}, "--seconds wants a number from 0.5 to 60, got '0.1'"},
      {{"--seconds", "nan"}, "got 'nan'"},
  };
  for (const Case& c : cases) {
    Parsed p = parse(c.args);
    EXPECT_EQ(p.rc, 2) << c.why;
    EXPECT_THAT(p.err, HasSubstr(c.why));
    EXPECT_THAT(p.err, HasSubstr("usage: bench_x [--runs N]"));
    EXPECT_EQ(p.out, "");
  }
}

int exit_status(const std::string& command) {
  const int raw = std::system(command.c_str());
  return raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

TEST(BenchPrograms, HelpExitsZeroWithoutRunningAndUnknownFlagsExitTwo) {
  for (const char* bench : {"bench_brain", "bench_agent"}) {
    const std::string path = std::string(ORCH_BIN_DIR) + "/" + bench;
    // A benchmark that ran would take seconds and print its table; --help must not.
    EXPECT_EQ(exit_status("timeout 10 " + path + " --help | grep -q '^usage: " + bench + "'"), 0)
        << bench;
    EXPECT_EQ(exit_status("timeout 10 " + path + " --no-such-flag 2>/dev/null"), 2) << bench;
  }
}

}  // namespace
}  // namespace orch::bench
