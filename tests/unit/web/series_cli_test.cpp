// `orchestrate job show ID --series` in-process against a real HttpServer over the fake backend,
// and its sparklines: one block per attempt, one scale per figure across attempts, a single
// step's loss spike named with its step; --json (or -o json) prints the endpoint's JSON.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/series_command.h"
#include "tests/unit/web/cli_server_fixture.h"

namespace orch {
namespace {

using nlohmann::json;
using SeriesCliTest = CliServerTest;

TEST(Sparkline, EightLevelsFromLowToHighASpaceForNothing) {
  EXPECT_EQ(sparkline({0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0}, 0, 7), "▁▂▃▄▅▆▇█");
  EXPECT_EQ(sparkline({1.0, std::nullopt, 3.0}, 1, 3), "▁ █");
  EXPECT_EQ(sparkline({5.0, 5.0}, 5, 5), "▄▄") << "a flat line sits in the middle";
  EXPECT_EQ(sparkline({}, 0, 1), "");
}

json point(std::int64_t step, json loss, json loss_max, json tokens_per_s, json mfu) {
  return {{"step", step},         {"first_step", step},
          {"last_step", step},    {"at_ms", 1},
          {"loss", loss},         {"loss_min", loss},
          {"loss_max", loss_max}, {"tokens_per_s", tokens_per_s},
          {"step_time_s", 0.5},   {"mfu", mfu}};
}

TEST(RenderSeries, ABlockPerAttemptOnOneScaleWithTheSpikeNamed) {
  json first = json::array();
  json second = json::array();
  for (int s = 1; s <= 120; ++s) {
    const double loss = 4.0 - s * 0.01;
    first.push_back(point(s, loss, s == 77 ? 50.0 : loss, 20000.0, 0.4));
  }
  for (int s = 101; s <= 130; ++s)
    second.push_back(point(s, 3.0 - s * 0.01, 2.0, 40000.0, nullptr));
  const json series = {{"job_id", 7},
                       {"max_points", 2000},
                       {"attempts",
                        {{{"attempt", 1},
                          {"cluster", "alpha"},
                          {"resumed_from_step", nullptr},
                          {"mfu_flag", ""},
                          {"points", first}},
                         {{"attempt", 2},
                          {"cluster", "beta"},
                          {"resumed_from_step", 100},
                          {"mfu_flag", ""},
                          {"points", second}},
                         {{"attempt", 3},
                          {"cluster", "beta"},
                          {"resumed_from_step", 130},
                          {"mfu_flag", ""},
                          {"points", json::array()}}}},
                       {"checkpoints", {{{"step", 100}, {"attempt", 1}, {"at_ms", 1}}}}};
  std::ostringstream out;
  render_series(series, out);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("job 7: 3 attempts, 150 points\n", 0), 0u) << text;
  EXPECT_NE(text.find("attempt 1 on alpha: steps 1..120\n  loss        █"), std::string::npos)
      << "attempt 1 starts at the top of the shared loss scale:\n"
      << text;
  EXPECT_NE(text.find("max 50 (step 77)"), std::string::npos) << text;
  // A merged point names its steps; a figure flat but for rounding is drawn flat.
  json merged = series;
  merged["attempts"][0]["points"][76]["first_step"] = 70;
  for (json& p : merged["attempts"][0]["points"]) p["mfu"] = 0.4 + 1e-16 * p["step"].get<int>();
  std::ostringstream again;
  render_series(merged, again);
  EXPECT_NE(again.str().find("max 50 (steps 70..77)"), std::string::npos) << again.str();
  std::string flat;
  for (int i = 0; i < 60; ++i) flat += "▄";
  EXPECT_NE(again.str().find("  MFU         " + flat + "  min 40.0%"), std::string::npos)
      << again.str();
  EXPECT_NE(text.find("attempt 2 on beta: steps 101..130 (resumed from 100)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  tokens/s    ██████████████████████████████  min 40.0k  last 40.0k"),
            std::string::npos)
      << "attempt 2's 30 points on the scale shared with attempt 1:\n"
      << text;
  EXPECT_NE(text.find("  MFU         (not reported)"), std::string::npos) << text;
  EXPECT_NE(text.find("  MFU         ▄"), std::string::npos) << text;
  EXPECT_NE(text.find("min 40.0%  last 40.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("attempt 3 on beta: no progress reported"), std::string::npos) << text;
  EXPECT_NE(text.find("checkpoints: 1, latest at step 100 (attempt 1)"), std::string::npos);
  // At most 60 columns per line.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  loss", 0) != 0) continue;
    const std::string bars = line.substr(14, line.find("  min") - 14);
    EXPECT_LE(bars.size(), 60u * 3) << line;  // three bytes a bar
  }
}

TEST_F(SeriesCliTest, JobShowSeriesAsksTheEndpointAndDrawsIt) {
  EXPECT_EQ(cli({"--server", options.server, "job", "show", "1", "--series"}), 0) << err.str();
  EXPECT_TRUE(has("job 1: 2 attempts, 4 points\n")) << out.str();
  EXPECT_TRUE(has("attempt 2 on alpha: steps 3..4 (resumed from 2)\n")) << out.str();
  EXPECT_TRUE(has("  loss        ")) << out.str();
  EXPECT_EQ(backend.series_points_asked, 2000);
}

TEST_F(SeriesCliTest, JsonIsTheEndpointsJson) {
  EXPECT_EQ(cli({"--server", options.server, "job", "show", "2", "--series", "--json"}), 0)
      << err.str();
  const json body = json::parse(out.str());
  EXPECT_EQ(body["job_id"], 2);
  EXPECT_EQ(body["attempts"].size(), 2u);
  out.str("");
  EXPECT_EQ(cli({"--server", options.server, "-o", "json", "job", "show", "1", "--series"}), 0);
  EXPECT_EQ(json::parse(out.str())["max_points"], 2000);
}

TEST_F(SeriesCliTest, AnUnknownJobIsTheServersError) {
  EXPECT_EQ(cli({"--server", options.server, "job", "show", "9", "--series"}), 1);
  EXPECT_EQ(err.str(), "error: no job with id 9\n");
}

}  // namespace
}  // namespace orch
