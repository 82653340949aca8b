// The place flags of `orchestrate-agent run` as functions: which combinations make a place,
// which are usage errors (naming the flag), the place read from srun's variables, and the
// events file name's %t, %n and %%. No processes (run_gang_test.cpp runs the binary).

#include "agents/task_place_flags.h"

#include <gmock/gmock.h>

#include <map>

#include "agents/run_command.h"

namespace orch::agent {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kPlace = {"--node-rank",      "1",  "--nnodes",      "2",
                                         "--tasks-per-node", "4",  "--local-rank",  "3",
                                         "--master-addr",    "h0", "--master-port", "25000"};

// `run --events e FLAGS -- true`: the error, or "" when it parses.
std::string parse_error(std::vector<std::string> flags, RunOptions* options = nullptr) {
  std::vector<std::string> args = {"--events", "e"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--", "true"});
  RunOptions local;
  std::string error;
  bool ok = parse_run_options(args, options ? options : &local, &error);
  EXPECT_EQ(ok, error.empty());
  return error;
}

std::vector<std::string> without(const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i < kPlace.size(); i += 2) {
    if (kPlace[i] == flag) continue;
    out.push_back(kPlace[i]);
    out.push_back(kPlace[i + 1]);
  }
  return out;
}

std::vector<std::string> with(std::vector<std::string> flags, const std::string& flag,
                              const std::string& value) {
  for (size_t i = 0; i < flags.size(); i += 2) {
    if (flags[i] == flag) flags[i + 1] = value;
  }
  return flags;
}

TEST(PlaceFlags, NoneGivenIsATaskAlone) {
  RunOptions o;
  EXPECT_EQ(parse_error({"--node-name", "n7"}, &o), "");
  EXPECT_EQ(o.place.from, PlaceRequest::From::none);
  EXPECT_EQ(o.node_name, "n7");
  auto place = resolve_place(o.place, [](std::string_view) { return std::nullopt; });
  ASSERT_TRUE(place.ok());
  EXPECT_FALSE(place->has_value());
}

TEST(PlaceFlags, AllSixGiveThePlace) {
  RunOptions o;
  EXPECT_EQ(parse_error(kPlace, &o), "");
  ASSERT_EQ(o.place.from, PlaceRequest::From::flags);
  auto place = resolve_place(o.place, [](std::string_view) { return std::nullopt; });
  ASSERT_TRUE(place.ok() && place->has_value());
  const TaskPlace& p = **place;
  EXPECT_EQ(p.node_rank, 1);
  EXPECT_EQ(p.nnodes, 2);
  EXPECT_EQ(p.tasks_per_node, 4);
  EXPECT_EQ(p.local_rank, 3);
  EXPECT_EQ(p.master_addr, "h0");
  EXPECT_EQ(p.master_port, 25000);
  EXPECT_EQ(task_rank(p), 7);
}

TEST(PlaceFlags, EachMissingFlagIsNamed) {
  for (const char* flag : {"--node-rank", "--nnodes", "--tasks-per-node", "--local-rank",
                           "--master-addr", "--master-port"}) {
    EXPECT_THAT(parse_error(without(flag)), HasSubstr(std::string(flag) + " is missing")) << flag;
  }
  // The rendezvous alone is no place either.
  EXPECT_THAT(parse_error({"--master-addr", "h0", "--master-port", "1"}),
              HasSubstr("--node-rank is missing"));
}

TEST(PlaceFlags, BadValuesNameTheirFlag) {
  EXPECT_THAT(parse_error(with(kPlace, "--nnodes", "two")),
              HasSubstr("--nnodes wants a whole number, got 'two'"));
  EXPECT_THAT(parse_error(with(kPlace, "--local-rank", "4")),
              HasSubstr("--local-rank: task place: local_rank is 4, must be 0 to 3"));
  EXPECT_THAT(parse_error(with(kPlace, "--node-rank", "2")), HasSubstr("--node-rank: "));
  EXPECT_THAT(parse_error(with(kPlace, "--nnodes", "0")), HasSubstr("--nnodes: "));
  EXPECT_THAT(parse_error(with(kPlace, "--tasks-per-node", "0")), HasSubstr("--tasks-per-node: "));
  EXPECT_THAT(parse_error(with(kPlace, "--master-port", "70000")), HasSubstr("--master-port: "));
  EXPECT_THAT(parse_error(with(kPlace, "--master-addr", "")), HasSubstr("--master-addr: "));
  RunOptions o;
  std::string error;
  EXPECT_FALSE(parse_run_options({"--events", "e", "--node-rank"}, &o, &error));
  EXPECT_EQ(error, "--node-rank needs a value");
}

TEST(PlaceFlags, FromSlurmTakesOnlyTheRendezvous) {
  RunOptions o;
  EXPECT_EQ(parse_error({"--place-from", "slurm", "--master-addr", "h0", "--master-port", "2"}, &o),
            "");
  EXPECT_EQ(o.place.from, PlaceRequest::From::slurm);
  EXPECT_THAT(parse_error({"--place-from", "slurm", "--master-port", "2"}),
              HasSubstr("--place-from slurm needs --master-addr"));
  EXPECT_THAT(parse_error({"--place-from", "slurm", "--master-addr", "h0"}),
              HasSubstr("--place-from slurm needs --master-port"));
  EXPECT_THAT(parse_error({"--place-from", "slurm", "--master-addr", "h0", "--master-port", "0"}),
              HasSubstr("--master-port: "));
  EXPECT_THAT(parse_error({"--place-from", "pbs", "--master-addr", "h", "--master-port", "2"}),
              HasSubstr("--place-from wants 'slurm', got 'pbs'"));
  std::vector<std::string> mixed = kPlace;
  mixed.insert(mixed.end(), {"--place-from", "slurm"});
  EXPECT_THAT(parse_error(mixed), HasSubstr("--place-from slurm and --node-rank do not go"));
}

TEST(PlaceFlags, FromSlurmReadsSrunsVariablesAtRunTime) {
  PlaceRequest request;
  request.from = PlaceRequest::From::slurm;
  request.place.master_addr = "h0";
  request.place.master_port = 25000;
  std::map<std::string, std::string, std::less<>> env = {{"SLURM_NODEID", "1"},
                                                         {"SLURM_NNODES", "2"},
                                                         {"SLURM_LOCALID", "1"},
                                                         {"SLURM_NTASKS", "4"},
                                                         {"SLURM_PROCID", "3"}};
  auto lookup = [&](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  auto place = resolve_place(request, lookup);
  ASSERT_TRUE(place.ok() && place->has_value()) << place.error().message;
  EXPECT_EQ(task_rank(**place), 3);
  EXPECT_EQ((*place)->tasks_per_node, 2);
  EXPECT_EQ((*place)->master_addr, "h0");

  env["SLURM_NTASKS"] = "3";
  place = resolve_place(request, lookup);
  ASSERT_FALSE(place.ok());
  EXPECT_THAT(place.error().message, HasSubstr("SLURM_NTASKS"));
  env["SLURM_NTASKS"] = "4";
  env.erase("SLURM_LOCALID");
  place = resolve_place(request, lookup);
  ASSERT_FALSE(place.ok());
  EXPECT_THAT(place.error().message, HasSubstr("SLURM_LOCALID is not set"));
}

TEST(EventsPath, PatternsAreReplacedLikeSruns) {
  std::string out, error;
  ASSERT_TRUE(expand_events_path("/r/task-%t/node-%n/%%e%%.jsonl", 7, 1, &out, &error));
  EXPECT_EQ(out, "/r/task-7/node-1/%e%.jsonl");
  ASSERT_TRUE(expand_events_path("plain", 7, 1, &out, &error));
  EXPECT_EQ(out, "plain");
  EXPECT_FALSE(expand_events_path("e-%q", 0, 0, &out, &error));
  EXPECT_THAT(error, HasSubstr("'%q' is not a pattern"));
  EXPECT_FALSE(expand_events_path("e-%", 0, 0, &out, &error));
  EXPECT_THAT(error, HasSubstr("'%' is not a pattern"));
}

TEST(EventsPath, BadPatternsAreUsageErrors) {
  std::vector<std::string> args = {"--events", "e-%j", "--", "true"};
  RunOptions o;
  std::string error;
  EXPECT_FALSE(parse_run_options(args, &o, &error));
  EXPECT_THAT(error, HasSubstr("--events: '%j' is not a pattern"));
}

}  // namespace
}  // namespace orch::agent
