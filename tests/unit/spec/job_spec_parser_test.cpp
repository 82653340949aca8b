// What parse_job_spec accepts, what it fills in by default, and, for each way a spec can be
// wrong, the exact place and words of the error a user sees.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

TEST(JobSpecParser, MinimalSpecGetsDocumentedDefaults) {
  auto r = parse_job_spec("name: toy-gpt\ncommand: python train.py\n", "job.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const JobSpec& s = *r;
  EXPECT_EQ(s.name, "toy-gpt");
  EXPECT_EQ(s.command, "python train.py");
  EXPECT_TRUE(s.env.empty());
  EXPECT_EQ(s.nodes, 1);
  EXPECT_EQ(s.gpus_per_node, 1);
  EXPECT_EQ(s.total_gpus(), 1);
  EXPECT_EQ(s.checkpoint.dir, "");
  EXPECT_EQ(s.checkpoint.resume_env, "ORCH_RESUME_FROM");
  EXPECT_FALSE(s.checkpoint.interval_steps.has_value());
  EXPECT_FALSE(s.model.parameters || s.model.flops_per_token || s.model.layers);
  EXPECT_EQ(s.restart.max_infra_restarts, 10);
  EXPECT_EQ(s.restart.max_user_restarts, 0);
  EXPECT_EQ(s.restart.backoff.initial_s, 10.0);
  EXPECT_EQ(s.restart.backoff.max_s, 600.0);
  EXPECT_EQ(s.restart.backoff.multiplier, 2.0);
  EXPECT_TRUE(s.allowed_clusters.empty());
  EXPECT_TRUE(s.preferred_clusters.empty());
}

TEST(JobSpecParser, FullSpecReadsEveryField) {
  const char* yaml = R"(name: toy-gpt
command: "python train.py --lr 3e-4"
env: {LR: 3e-4, DEBUG: true, WORLD: 16, EMPTY: ""}
resources: {nodes: 2, gpus_per_node: 8}
checkpoint: {dir: run1//, resume_env: RESUME_PATH, interval_steps: 50}
model: {parameters: 7.0e9, layers: 32, hidden: 4096, sequence: 4096}
restart:
  max_infra_restarts: 3
  max_user_restarts: 1
  backoff: {initial_s: 0, max_s: 30.5, multiplier: 1}
placement: {allowed: [alpha, beta], preferred: [beta]}
)";
  auto r = parse_job_spec(yaml, "job.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const JobSpec& s = *r;
  EXPECT_EQ(s.command, "python train.py --lr 3e-4");
  // Scalars keep the text as written: 3e-4 stays "3e-4", not 0.0003.
  EXPECT_EQ(s.env.at("LR"), "3e-4");
  EXPECT_EQ(s.env.at("DEBUG"), "true");
  EXPECT_EQ(s.env.at("WORLD"), "16");
  EXPECT_EQ(s.env.at("EMPTY"), "");
  EXPECT_EQ(s.total_gpus(), 16);
  EXPECT_EQ(s.checkpoint.dir, "run1");  // in normal form
  EXPECT_EQ(s.checkpoint.resume_env, "RESUME_PATH");
  EXPECT_EQ(s.checkpoint.interval_steps, 50);
  EXPECT_EQ(s.model.parameters, 7.0e9);
  EXPECT_EQ(s.model.layers, 32);
  EXPECT_EQ(s.model.hidden, 4096);
  EXPECT_EQ(s.model.sequence, 4096);
  EXPECT_EQ(s.restart.max_infra_restarts, 3);
  EXPECT_EQ(s.restart.max_user_restarts, 1);
  EXPECT_EQ(s.restart.backoff.initial_s, 0.0);
  EXPECT_EQ(s.restart.backoff.max_s, 30.5);
  EXPECT_EQ(s.restart.backoff.multiplier, 1.0);
  EXPECT_EQ(s.allowed_clusters, (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(s.preferred_clusters, (std::vector<std::string>{"beta"}));
}

// The largest gangs hold hot spares of their own (issue 38); none unless asked for.
TEST(JobSpecParser, ReadsTheJobsOwnHotSpares) {
  auto r = parse_job_spec("name: big\ncommand: x\nresources: {nodes: 64, spares: 2}\n", "j.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->spares, 2);
  EXPECT_EQ(parse_job_spec("name: a\ncommand: x\n", "j.yaml")->spares, 0);
  auto bad = parse_job_spec("name: a\ncommand: x\nresources: {spares: -1}\n", "j.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("\"spares\" must be an integer from 0 to 100000"));
}

TEST(JobSpecParser, JsonBodyIsAcceptedToo) {
  auto r = parse_job_spec(
      R"({"name": "j1", "command": "true", "resources": {"nodes": 4}, "model": {"flops_per_token": 4.2e10}})",
      "request body");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->nodes, 4);
  EXPECT_EQ(r->model.flops_per_token, 4.2e10);
}

TEST(JobSpecParser, EmptySectionsAndPreferredWithoutAllowedAreFine) {
  auto r = parse_job_spec("name: a\ncommand: b\nresources:\nplacement: {preferred: [x]}\n", "j");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->preferred_clusters, (std::vector<std::string>{"x"}));
}

struct BadJob {
  const char* why;
  std::string yaml;
  std::string where;  // "line:col"
  std::string message;
};

// Every document below starts with a valid name and command unless the row is about them.
const std::string kHead = "name: toy-gpt\ncommand: python train.py\n";

const BadJob kBadJobs[] = {
    {"empty document", "", "1:1", "the document is empty; expected a job spec"},
    {"only a comment", "# nothing\n", "1:1", "the document is empty"},
    {"null document", "~\n", "1:1", "the document is empty"},
    {"scalar document", "hello\n", "1:1", "job must be a map, got \"hello\"; expected a map"},
    {"list document", "- a\n- b\n", "1:1", "job must be a map, got a list"},
    {"syntax error", "name: [a\ncommand: x\n", "2:8",
     "invalid YAML: end of sequence flow not found"},
    {"comma at the root", "name: a\n---\n,x: 1\n", "3:1",
     "invalid YAML: the parser got stuck on this input; expected well-formed YAML"},
    {"two documents", "name: a\ncommand: b\n---\nname: c\n", "4:1",
     "a second YAML document starts here; expected one document per file"},
    {"missing name", "command: x\n", "1:1",
     "missing required key \"name\" in job; expected a job name such as toy-gpt"},
    {"missing command", "name: x\n", "1:1", "missing required key \"command\" in job"},
    {"typo in top key", "nmae: x\ncommand: y\n", "1:1",
     "unknown key \"nmae\" in job; did you mean \"name\"?"},
    {"unrelated top key", kHead + "colour: high\n", "3:1",
     "unknown key \"colour\" in job; expected one of: name, command, env, resources"},
    {"duplicate key", kHead + "name: again\n", "3:1",
     "key \"name\" appears twice in job; expected each key once (first given at line 1)"},
    {"bad name chars", "name: toy gpt\ncommand: x\n", "1:7",
     "\"name\" must be 1 to 64 letters, digits, \".\", \"_\" or \"-\", got \"toy gpt\"; "
     "expected a name such as toy-gpt"},
    {"name too long", "name: " + std::string(65, 'a') + "\ncommand: x\n", "1:7",
     "\"name\" must be 1 to 64 letters"},
    {"empty command", "name: a\ncommand: \"\"\n", "2:10",
     "\"command\" must be a non-empty string, got the string \"\""},
    {"null command", "name: a\ncommand:\n", "2:1",
     "\"command\" must be a non-empty string, got null"},
    {"command is a list", "name: a\ncommand: [python, x]\n", "2:10",
     "\"command\" must be a non-empty string, got a list"},
    {"nodes not a number", kHead + "resources:\n  nodes: two\n", "4:10",
     "\"nodes\" must be an integer from 1 to 100000, got \"two\"; expected an integer such as 2"},
    {"nodes zero", kHead + "resources: {nodes: 0}\n", "3:20",
     "\"nodes\" must be an integer from 1 to 100000, got \"0\""},
    {"nodes fractional", kHead + "resources: {nodes: 1.5}\n", "3:20", "got \"1.5\""},
    {"nodes huge", kHead + "resources: {nodes: 99999999999999999999}\n", "3:20",
     "\"nodes\" must be an integer from 1 to 100000, got \"99999999999999999999\""},
    {"nodes beyond int", kHead + "resources: {nodes: 4294967296}\n", "3:20",
     "\"nodes\" must be an integer from 1 to 100000, got \"4294967296\""},
    {"nodes quoted", kHead + "resources: {nodes: \"2\"}\n", "3:20",
     "\"nodes\" must be an integer from 1 to 100000, got the string \"2\""},
    {"gpu typo", kHead + "resources:\n  nodes: 1\n  gpu_per_node: 8\n", "5:3",
     "unknown key \"gpu_per_node\" in resources; did you mean \"gpus_per_node\"?"},
    {"resources is a list", kHead + "resources: [1, 8]\n", "3:12",
     "resources must be a map, got a list; expected a map such as {nodes: 2, gpus_per_node: 8, "
     "tasks_per_node: 8}"},
    {"env is a list", kHead + "env: [A=1]\n", "3:6", "\"env\" must be a map, got a list"},
    {"env bad name", kHead + "env: {1BAD: x}\n", "3:7",
     "a key of \"env\" must be a variable name: a letter or \"_\", then letters, digits or \"_\", "
     "got \"1BAD\""},
    {"env value map", kHead + "env:\n  A: {b: 1}\n", "4:6",
     "\"env.A\" must be a string, got a map"},
    {"env value null", kHead + "env:\n  A:\n", "4:3", "\"env.A\" must be a string, got null"},
    {"resume_env invalid", kHead + "checkpoint: {dir: c, resume_env: RESUME-FROM}\n", "3:34",
     "\"resume_env\" must be a variable name"},
    // A job's checkpoints live under the directory the server gives it (issue 37).
    {"checkpoint dir absolute", kHead + "checkpoint: {dir: /ckpt/run1}\n", "3:19",
     "\"dir\" must be a subdirectory of the job's own checkpoint directory: '/ckpt/run1' is "
     "not a relative path; each job writes its checkpoints under "
     "$ORCH_CHECKPOINT_DIR, which orchestrate creates for it at every site; expected a relative "
     "path such as run1, or no \"dir\""},
    {"checkpoint dir up", kHead + "checkpoint:\n  dir: run/../../other\n", "4:8",
     "'run/../../other' has a '..' component"},
    {"interval zero", kHead + "checkpoint: {interval_steps: 0}\n", "3:30",
     "\"interval_steps\" must be an integer >= 1, got \"0\""},
    // Issue 43, I/O stalls: a factor of 1 would make every other save a stall.
    {"stall factor one", kHead + "checkpoint: {stall_factor: 1}\n", "3:28",
     "\"stall_factor\" must be above 1: every other save would be a stall"},
    {"stall minimum zero", kHead + "checkpoint: {stall_min_s: 0}\n", "3:27",
     "\"stall_min_s\" must be a number > 0"},
    {"parameters negative", kHead + "model: {parameters: -1}\n", "3:21",
     "\"parameters\" must be a number > 0, got \"-1\"; expected a parameter count such as 7.0e9"},
    {"parameters infinite", kHead + "model: {parameters: .inf}\n", "3:21",
     "\"parameters\" must be a number > 0, got \".inf\""},
    {"parameters overflow", kHead + "model: {parameters: 1e999}\n", "3:21", "got \"1e999\""},
    {"both sizes", kHead + "model: {parameters: 7e9, flops_per_token: 4.2e10}\n", "3:26",
     "give either \"parameters\" or \"flops_per_token\" in model, not both"},
    {"attention without parameters", kHead + "model: {flops_per_token: 1e9, layers: 2}\n", "3:8",
     "\"layers\", \"hidden\" and \"sequence\" need \"parameters\" in model"},
    {"attention partial", kHead + "model: {parameters: 1e9, layers: 2}\n", "3:8",
     "\"layers\", \"hidden\" and \"sequence\" must be given together in model"},
    {"negative restarts", kHead + "restart: {max_user_restarts: -1}\n", "3:30",
     "\"max_user_restarts\" must be an integer >= 0, got \"-1\""},
    {"multiplier below one", kHead + "restart: {backoff: {multiplier: 0.5}}\n", "3:33",
     "\"multiplier\" must be a number >= 1, got \"0.5\""},
    {"max below initial", kHead + "restart:\n  backoff: {initial_s: 60, max_s: 5}\n", "4:35",
     "\"max_s\" (5) is less than \"initial_s\" (60); expected max_s >= initial_s"},
    {"default max below initial", kHead + "restart: {backoff: {initial_s: 1000}}\n", "3:32",
     "\"max_s\" (600) is less than \"initial_s\" (1000)"},
    {"backoff typo", kHead + "restart: {backoff: {inital_s: 1}}\n", "3:21",
     "unknown key \"inital_s\" in restart.backoff; did you mean \"initial_s\"?"},
    {"allowed is a scalar", kHead + "placement: {allowed: alpha}\n", "3:22",
     "\"allowed\" must be a list, got \"alpha\"; expected a list of cluster names"},
    {"allowed bad item", kHead + "placement: {allowed: [alpha, {x: 1}]}\n", "3:30",
     "each item of \"allowed\" must be 1 to 64 letters"},
    {"preferred not allowed",
     kHead + "placement:\n  allowed: [alpha, beta]\n  preferred: [gamma]\n", "5:15",
     "preferred cluster \"gamma\" is not in \"allowed\"; expected a subset of allowed: alpha, "
     "beta"},
    // Limits of what the agent and the adapters accept (scheduler/model/launch_limits.h).
    {"hang_after_s beyond the agent's limit", kHead + "health: {hang_after_s: 1e300}\n", "3:24",
     "\"hang_after_s\" must be a number from 0 to 2592000, got \"1e300\"; expected seconds such as "
     "600 (0: never; at most 30 days; unset: adaptive)"},
    {"hang_after_s just beyond 30 days", kHead + "health: {hang_after_s: 2592000.5}\n", "3:24",
     "\"hang_after_s\" must be a number from 0 to 2592000"},
    {"hang_after_s below a millisecond", kHead + "health: {hang_after_s: 1e-320}\n", "3:24",
     "\"hang_after_s\" is 1e-320, less than a millisecond"},
    {"backoff beyond a year", kHead + "restart: {backoff: {max_s: 1e300}}\n", "3:28",
     "\"max_s\" must be a number from 0 to 31536000"},
    {"GPUs overflow an int", kHead + "resources: {nodes: 65536, gpus_per_node: 65536}\n", "3:12",
     "nodes x gpus_per_node is 4294967296 GPUs; expected at most 2147483647 GPUs in all"},
    {"env sets ORCH_GPUS", kHead + "env:\n  A: b\n  ORCH_GPUS: \"8\"\n", "5:3",
     "env sets ORCH_GPUS, which orchestrate sets itself for every attempt"},
    {"env sets a dataset variable", kHead + "env: {ORCH_DATASET_C4: /x}\n", "3:7",
     "env sets ORCH_DATASET_C4, which orchestrate sets itself"},
    {"resume_env is reserved", kHead + "checkpoint: {resume_env: ORCH_LAUNCH_TOKEN}\n", "3:26",
     "\"resume_env\" names ORCH_LAUNCH_TOKEN, which orchestrate sets itself for every attempt"},
    {"command beyond MAX_ARG_STRLEN", "name: a\ncommand: " + std::string(131072, 'x') + "\n",
     "2:10", "\"command\" is 131072 bytes long; expected at most 131071 bytes"},
    {"env value beyond MAX_ARG_STRLEN", kHead + "env: {AB: " + std::string(131069, 'x') + "}\n",
     "3:11", "\"env.AB\" is 131072 bytes as NAME=value; expected at most 131071 bytes"},
    // Invalid UTF-8 is refused where it is, with its byte offset in the value: JSON (the store,
    // every API reply) cannot hold it.
    {"invalid UTF-8 in command", "name: a\ncommand: python \xFF train.py\n", "2:10",
     "command: invalid UTF-8 at byte offset 7 (0xff); expected UTF-8 text"},
    {"invalid UTF-8 in a quoted command", "name: a\ncommand: \"echo \xC0\xAF\"\n", "2:10",
     "command: invalid UTF-8 at byte offset 5 (0xc0)"},
    {"surrogate in name", "name: \xED\xA0\x80x\ncommand: b\n", "1:7",
     "name: invalid UTF-8 at byte offset 0 (0xed)"},
    {"invalid UTF-8 in env value", kHead + "env:\n  LR: \"3e-4\xF4\x90\x80\x80\"\n", "4:7",
     "env.LR: invalid UTF-8 at byte offset 4 (0xf4)"},
    {"invalid UTF-8 in env name", kHead + "env: {\"A\xFF\": b}\n", "3:7",
     "a key of env: invalid UTF-8 at byte offset 1 (0xff)"},
    {"invalid UTF-8 in a list item", kHead + "placement: {allowed: [alpha, b\xE2\x82]}\n", "3:30",
     "placement.allowed[1]: invalid UTF-8 at byte offset 1 (0xe2)"},
    {"invalid UTF-8 in checkpoint dir", kHead + "checkpoint:\n  dir: /ckpt/\x80\n", "4:8",
     "checkpoint.dir: invalid UTF-8 at byte offset 6 (0x80)"},
    {"invalid UTF-8 in an unknown key", kHead + "pr\xFFority: 1\n", "3:1",
     "a key: invalid UTF-8 at byte offset 2 (0xff)"},
    {"invalid UTF-8 in a comment", kHead + "# r\xC3sum\n", "3:4",
     "invalid UTF-8 at byte offset 42 of the text (0xc3)"},
    {"truncated sequence at the end", kHead + "# \xF0\x9F\x98", "3:3",
     "invalid UTF-8 at byte offset 41 of the text (0xf0)"},
    {"invalid UTF-8 in JSON", "{\"name\": \"a\", \"command\": \"x\xFE\"}", "1:26",
     "command: invalid UTF-8 at byte offset 1 (0xfe)"},
    {"NUL byte", std::string("name: a\ncommand: \"ab\0c\"\n", 22), "2:13",
     "a NUL byte at byte offset 20 of the text; expected UTF-8 text without NUL bytes"},
    // Tags: only YAML's core ones, each on the kind of node it names.
    {"python tag", kHead + "env: !!python/object:os.system {A: b}\n", "3:6",
     "env: unknown tag !!python/object:os.system; expected no tag, or one of the YAML core tags "
     "!!str, !!int, !!float, !!bool, !!null, !!seq or !!map"},
    {"python tag on name", "name: !!python/object/apply:os.system [\"ls\"]\ncommand: x\n", "1:7",
     "name: unknown tag !!python/object/apply:os.system"},
    {"local tag", kHead + "resources: {nodes: !two 2}\n", "3:20",
     "resources.nodes: unknown tag !two"},
    {"tag on a key", kHead + "!!binary env: {}\n", "3:1", "a key: unknown tag !!binary"},
    {"map tag on a scalar", kHead + "resources: {nodes: !!map 2}\n", "3:20",
     "resources.nodes: the tag !!map does not fit a scalar"},
    {"str tag makes a string", kHead + "resources: {nodes: !!str 2}\n", "3:20",
     "\"nodes\" must be an integer from 1 to 100000, got the string \"2\""},
    // Quotes must close: yaml-cpp would end the string at the end of the text.
    {"unclosed double quote", "name: a\ncommand: \"python train.py\nenv: {A: b}\n", "2:10",
     "command: the \" that starts this string is never closed; expected a closing \""},
    {"unclosed single quote", "name: a\ncommand: 'python train.py\n", "2:10",
     "command: the ' that starts this string is never closed"},
    {"unclosed quote after an escaped one", "name: a\ncommand: \"say \\\"hi\\\"\n", "2:10",
     "command: the \" that starts this string is never closed"},
    {"unclosed quote after a tag and anchor", "name: a\ncommand: &c !!str \"abc\n", "2:10",
     "command: the \" that starts this string is never closed"},
    {"unclosed quoted key", kHead + "env: {\"A: b}\n", "3:7",
     "a key of env: the \" that starts this string is never closed"},
    {"secret from a server file", kHead + "secret_env: {K: {file: /srv/state/admin.token}}\n",
     "3:18", "secret_env.K names a file of the server; a job may only name a secret"},
    {"secret from a server variable", kHead + "secret_env: {K: {env: AWS_SECRET_ACCESS_KEY}}\n",
     "3:18", "secret_env.K names a variable of the server"},
    {"secret with a name and a file", kHead + "secret_env: {K: {secret: hf, file: /a}}\n", "3:30",
     "secret_env.K names a file of the server"},
    {"secret with no name", kHead + "secret_env: {K: {}}\n", "3:17",
     "missing required key \"secret\""},
    {"secret named badly", kHead + "secret_env: {K: {secret: \"a/b\"}}\n", "3:26",
     "\"secret\" must be 1 to 64 letters"},
    {"secret also in env", kHead + "env: {K: v}\nsecret_env: {K: {secret: k}}\n", "4:14",
     "secret_env sets K, which env sets too"},
    {"secret of orchestrate's own", kHead + "secret_env: {ORCH_JOB_ID: {secret: x}}\n", "3:14",
     "secret_env sets ORCH_JOB_ID, which orchestrate sets itself"},
    {"secret given as a value", kHead + "secret_env: {K: hunter2}\n", "3:17", "secret_env.K"},
};

class BadJobSpec : public ::testing::TestWithParam<BadJob> {};

TEST_P(BadJobSpec, IsRejectedWithPositionAndReason) {
  const BadJob& row = GetParam();
  auto r = parse_job_spec(row.yaml, "job.yaml");
  ASSERT_FALSE(r.ok()) << row.why << ": accepted";
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, ::testing::StartsWith("job.yaml:" + row.where + ": ")) << row.why;
  EXPECT_THAT(r.error().message, HasSubstr(row.message)) << row.why;
}

INSTANTIATE_TEST_SUITE_P(Table, BadJobSpec, ::testing::ValuesIn(kBadJobs),
                         [](const ::testing::TestParamInfo<BadJob>& param_info) {
                           std::string name = param_info.param.why;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(JobSpecParser, SecretEnvNamesRegisteredSecrets) {
  auto r = parse_job_spec(kHead +
                              "team: vision\n"
                              "secret_env: {WANDB_API_KEY: {secret: wandb}, "
                              "HF_TOKEN: {secret: hf-token}}\n",
                          "job.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->team, "vision");
  EXPECT_EQ(r->secret_env, (std::map<std::string, std::string>{{"WANDB_API_KEY", "wandb"},
                                                               {"HF_TOKEN", "hf-token"}}));
  EXPECT_TRUE(r->env.empty());
}

TEST(JobSpecParser, LimitsOfTheAgentAreAccepted) {
  auto r = parse_job_spec(kHead +
                              "health: {hang_after_s: 2592000}\n"
                              "resources: {nodes: 32768, gpus_per_node: 65535}\n"
                              "env: {AB: " +
                              std::string(131068, 'x') +
                              ", ORCH_RESUME_FROM: /c}\n"
                              "restart: {backoff: {initial_s: 0, max_s: 31536000}}\n",
                          "job.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->health.hang_after_s, 2592000);
  // The resume variable may be given by hand (a job that starts from a chosen checkpoint).
  EXPECT_EQ(r->env.at("ORCH_RESUME_FROM"), "/c");
  ASSERT_TRUE(parse_job_spec(kHead + "health: {hang_after_s: 0.001}\n", "job.yaml").ok());
  ASSERT_TRUE(parse_job_spec(kHead + "health: {hang_after_s: 0}\n", "job.yaml").ok());
}

TEST(JobSpecParser, QuotesTagsAndUnicodeThatAreFine) {
  auto r = parse_job_spec(
      "name: !!str toy\n"
      "command: \"echo \\\"caf\xC3\xA9\\\" \\\\\"\n"
      "env:\n"
      "  A: 'it''s'\n"
      "  B: \"two\n    lines\"\n"
      "  C: !!str 3\n"
      "  D: \"\\u00e9\\U0001F600\"\n"
      "  E: |\n    block \"with a quote\n"
      "resources: !!map {nodes: !!int 2}\n"
      "placement: {allowed: !!seq [a]}\n",
      "job.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->name, "toy");
  EXPECT_EQ(r->command, "echo \"caf\xC3\xA9\" \\");
  EXPECT_EQ(r->env.at("A"), "it's");
  EXPECT_EQ(r->env.at("B"), "two lines");
  EXPECT_EQ(r->env.at("C"), "3");
  EXPECT_EQ(r->env.at("D"), "\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(r->env.at("E"), "block \"with a quote\n");
  EXPECT_EQ(r->nodes, 2);
  // A byte order mark is fine too.
  EXPECT_TRUE(parse_job_spec("\xEF\xBB\xBFname: a\ncommand: \"b\"\n", "job.yaml").ok());
}

TEST(JobSpecParser, SourceNameIsMadeValidUtf8) {
  auto r = parse_job_spec("name: a\n", "job\xFF.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, ::testing::StartsWith("job\xEF\xBF\xBD.yaml:1:1: "));
}

TEST(JobSpecParser, SourceNameIsUsedVerbatim) {
  auto r = parse_job_spec("name: a\n", "jobs/train 1.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, ::testing::StartsWith("jobs/train 1.yaml:1:1: "));
}

}  // namespace
}  // namespace orch
