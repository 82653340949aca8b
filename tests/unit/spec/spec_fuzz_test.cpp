// Whatever bytes arrive, the parsers answer with a value or an error: they never throw and
// never crash. The inputs are every truncation of a valid spec plus deterministic garbling.

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

const std::string kJob = R"(name: toy-gpt
command: "python train.py --lr 3e-4"
env: {LR: "3e-4", SEED: 1}
resources: {nodes: 2, gpus_per_node: 8}
checkpoint: {dir: run1, resume_env: ORCH_RESUME_FROM, interval_steps: 50}
model: {parameters: 7.0e9, layers: 32, hidden: 4096, sequence: 4096}
restart:
  max_infra_restarts: 10
  backoff: {initial_s: 10, max_s: 600, multiplier: 2}
placement:
  allowed: [alpha, beta]
  preferred: [alpha]
)";

const std::string kClusters = R"(server: {bind: 127.0.0.1, port: 8080}
clusters:
  - name: alpha
    nodes: 2
    gpus_per_node: 4
    accelerator: cpu-slot
    storage: {root: /tmp/a}
  - {name: beta, peak_tflops: 0.01, accelerator: x}
)";

// Parses and checks the one promise: an error, when there is one, says where.
template <typename Parse>
void expect_answer(Parse parse, const std::string& text) {
  auto r = parse(text);
  if (!r.ok()) {
    EXPECT_EQ(r.error().kind, ErrorKind::invalid) << text;
    EXPECT_EQ(r.error().message.rfind("f.yaml:", 0), 0u) << r.error().message;
  }
}

auto job = [](const std::string& t) { return parse_job_spec(t, "f.yaml"); };
auto clusters = [](const std::string& t) { return parse_clusters_file(t, "f.yaml"); };

TEST(SpecFuzz, ValidInputsParse) {
  ASSERT_TRUE(job(kJob).ok()) << job(kJob).error().message;
  ASSERT_TRUE(clusters(kClusters).ok()) << clusters(kClusters).error().message;
}

TEST(SpecFuzz, EveryTruncationIsAnswered) {
  for (std::size_t n = 0; n <= kJob.size(); ++n) {
    EXPECT_NO_THROW(expect_answer(job, kJob.substr(0, n)));
  }
  for (std::size_t n = 0; n <= kClusters.size(); ++n) {
    EXPECT_NO_THROW(expect_answer(clusters, kClusters.substr(0, n)));
  }
}

TEST(SpecFuzz, GarbledInputsAreAnswered) {
  const std::string alphabet = "{}[]:,-'\"#&*!|>%@`\t\n ?0a\\\x01\xff";
  std::mt19937 rng(20240601);  // fixed seed: a failure reproduces
  for (const std::string* base : {&kJob, &kClusters}) {
    for (int round = 0; round < 1500; ++round) {
      std::string text = *base;
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        std::size_t at = rng() % (text.size() + 1);
        switch (rng() % 3) {
          case 0:
            text.insert(at, 1, alphabet[rng() % alphabet.size()]);
            break;
          case 1:
            if (at < text.size()) text.erase(at, 1 + rng() % 8);
            break;
          default:
            if (at < text.size()) text[at] = alphabet[rng() % alphabet.size()];
        }
      }
      if (base == &kJob) {
        EXPECT_NO_THROW(expect_answer(job, text));
      } else {
        EXPECT_NO_THROW(expect_answer(clusters, text));
      }
    }
  }
}

TEST(SpecFuzz, HostileShapesAreAnswered) {
  const std::string cases[] = {
      // Each of these sent yaml-cpp 0.7 into an endless, allocating loop (see EventBudget in
      // yaml_load.cpp); without the guard this test exhausts memory.
      ",",
      ",x: 1\n",
      "# comment\n\n  ,x\n",
      "name: a\ncommand: b\n---\n,x\n",
      "--- |\n,x",
      "&a ,x",
      "!>\n? a",
      std::string(5000, '['),
      std::string(5000, '{'),
      "a: &x [*x]",
      "clusters: &x [*x]",
      "name: &n a\ncommand: *n\nenv: &e {A: *n}\nplacement: {allowed: *e}",
      "? [a, b]\n: c\n",
      "name: a\ncommand: b\nenv: {? [x]: y}\n",
      "!!binary aGVsbG8=",
      "name: !!int 3\ncommand: !custom x\n",
      std::string("name: a\0b\ncommand: c\n", 20),
      "\xef\xbb\xbfname: a\ncommand: b\n",
      "name: a\ncommand: b\nresources: {nodes: -9223372036854775809}\n",
      "name: a\ncommand: b\nmodel: {parameters: 1e-400}\n",
      "clusters: [[], {}, ~, 1]",
      "clusters:\n  - name: a\n    storage: [1]\n",
  };
  for (const std::string& text : cases) {
    EXPECT_NO_THROW(expect_answer(job, text)) << text.substr(0, 40);
    EXPECT_NO_THROW(expect_answer(clusters, text)) << text.substr(0, 40);
  }
}

}  // namespace
}  // namespace orch
