// `job list` and `job show` say what a job is (issue 42, item 2): a sweep point is named with
// its values, and `-o wide` adds each job's priority, team, group and owner; the reason is a
// column of its own in both.
#include <gmock/gmock.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "cli/job_render.h"

namespace orch {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

json sweep_point_job() {
  return {{"id", 7},
          {"name", "lr-sweep-1"},
          {"sweep_point", "LR=1e-4 --seed 1"},
          {"state", "pending"},
          {"cluster", nullptr},
          {"nodes", 2},
          {"gpus_per_node", 4},
          {"gpus", 8},
          {"priority", 100},
          {"priority_class", "hero"},
          {"team", "vision"},
          {"group", "lr-sweep"},
          {"owner", "alice"},
          {"attempts", 0},
          {"reason", "capacity: only 2 of 8 GPUs free on east"}};
}

json plain_job() {
  return {{"id", 3},
          {"name", "bert"},
          {"sweep_point", ""},
          {"state", "running"},
          {"nodes", 1},
          {"gpus_per_node", 1},
          {"gpus", 1},
          {"priority", 0},
          {"priority_class", ""},
          {"team", ""},
          {"group", ""},
          {"owner", "bob"},
          {"reason", ""}};
}

std::string listed(bool wide) {
  std::ostringstream out;
  render_jobs(json{{"jobs", {sweep_point_job(), plain_job()}}}, out, wide);
  return out.str();
}

// The line of the table that starts with this id.
std::string row_of(const std::string& table, const std::string& id) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(id + " ", 0) == 0) return line;
  }
  return "";
}

// A row's cells: the text between runs of two or more spaces (the table's separator).
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < row.size()) {
    std::size_t gap = row.find("  ", at);
    if (gap == std::string::npos) gap = row.size();
    out.push_back(row.substr(at, gap - at));
    at = row.find_first_not_of(' ', gap);
    if (at == std::string::npos) break;
  }
  return out;
}

TEST(JobListRender, ASweepPointIsNamedWithItsValues) {
  EXPECT_THAT(row_of(listed(false), "7"), HasSubstr("lr-sweep-1 \u00b7 LR=1e-4 --seed 1"));
  EXPECT_THAT(row_of(listed(false), "3"), HasSubstr("bert "));
  EXPECT_THAT(row_of(listed(false), "3"), Not(HasSubstr("\u00b7")));
}

TEST(JobListRender, TheReasonIsAColumnOfItsOwn) {
  const std::string table = listed(false);
  EXPECT_THAT(table.substr(0, table.find('\n')), HasSubstr("REASON"));
  EXPECT_THAT(row_of(table, "7"), HasSubstr("capacity: only 2 of 8 GPUs free on east"));
}

TEST(JobListRender, WideAddsPriorityTeamGroupAndOwnerAndTheTotalGpus) {
  const std::string table = listed(true);
  const std::string header = table.substr(0, table.find('\n'));
  for (const char* column : {"GPUS", "PRIORITY", "TEAM", "GROUP", "OWNER", "REASON"}) {
    EXPECT_THAT(header, HasSubstr(column)) << table;
  }
  const std::vector<std::string> columns = cells(header);
  const auto at = [&](const char* column) {
    return std::find(columns.begin(), columns.end(), column) - columns.begin();
  };
  const std::vector<std::string> row = cells(row_of(table, "7"));
  ASSERT_EQ(row.size(), columns.size()) << table;
  EXPECT_EQ(row[at("GPUS")], "8 (2x4)");
  EXPECT_EQ(row[at("PRIORITY")], "100 (hero)");
  EXPECT_EQ(row[at("TEAM")], "vision");
  EXPECT_EQ(row[at("GROUP")], "lr-sweep");
  EXPECT_EQ(row[at("OWNER")], "alice");
  EXPECT_EQ(row[at("REASON")], "capacity: only 2 of 8 GPUs free on east");
  // A job of no team and no group shows "-" there, so that no column looks shifted.
  const std::vector<std::string> plain = cells(row_of(table, "3"));
  EXPECT_EQ(plain[at("PRIORITY")], "0");
  EXPECT_EQ(plain[at("TEAM")], "-");
  EXPECT_EQ(plain[at("GROUP")], "-");
}

TEST(JobListRender, TheDefaultTableHasNoWideColumns) {
  const std::string table = listed(false);
  EXPECT_THAT(table.substr(0, table.find('\n')), Not(HasSubstr("PRIORITY")));
}

TEST(JobListRender, AnOlderServerWithoutTheNewFieldsStillLists) {
  std::ostringstream out;
  render_jobs(json{{"jobs", {{{"id", 1}, {"name", "old"}, {"state", "running"}}}}}, out, true);
  EXPECT_THAT(row_of(out.str(), "1"), HasSubstr("old "));
}

TEST(JobShowRender, TheTitleNamesTheSweepPointAndTheFieldsSayPriorityAndGroup) {
  std::ostringstream out;
  render_job(sweep_point_job(), json{{"attempts", json::array()}}, json{{"events", json::array()}},
             out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("Job 7: lr-sweep-1 \u00b7 LR=1e-4 --seed 1\n"));
  EXPECT_THAT(text, HasSubstr("  priority         100 (hero)\n"));
  EXPECT_THAT(text, HasSubstr("  group            lr-sweep\n"));
}

}  // namespace
}  // namespace orch
