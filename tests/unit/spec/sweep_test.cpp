// Sweeps for ablations (issue 18): `sweep:` is read and checked with the rest of the spec, and
// expands into one job per point of its grid, named and grouped by the spec.
#include <gmock/gmock.h>

#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"
#include "scheduler/spec/sweep.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

constexpr const char* kJob = "name: lr\ncommand: python train.py\nenv: {DATA: c4}\n";

std::string error_of(const std::string& tail) {
  auto r = parse_job_spec(std::string(kJob) + tail, "job.yaml");
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

TEST(Sweep, AGridOfEnvValuesAndArgumentsBecomesOneJobPerPointInOrder) {
  auto spec = parse_job_spec(std::string(kJob) +
                                 "sweep:\n  env: {LR: [1e-4, 3e-4], WD: [0, 0.1]}\n"
                                 "  args: [\"--seed 1\", \"--seed 2\"]\n",
                             "job.yaml")
                  .value();
  EXPECT_EQ(spec.sweep.points(), 8u);
  EXPECT_EQ(spec.group, "lr");
  const auto jobs = expand_sweep(spec);
  ASSERT_EQ(jobs.size(), 8u);
  EXPECT_EQ(jobs[0].name, "lr-1");
  EXPECT_EQ(jobs[0].command, "python train.py --seed 1");
  EXPECT_EQ(jobs[0].env.at("LR"), "1e-4");
  EXPECT_EQ(jobs[0].env.at("WD"), "0");
  EXPECT_EQ(jobs[0].env.at("DATA"), "c4") << "the spec's env is every point's";
  EXPECT_EQ(jobs[1].command, "python train.py --seed 2") << "the args vary fastest";
  EXPECT_EQ(jobs[2].env.at("WD"), "0.1");
  EXPECT_EQ(jobs[2].env.at("LR"), "1e-4");
  EXPECT_EQ(jobs[7].name, "lr-8");
  EXPECT_EQ(jobs[7].env.at("LR"), "3e-4") << "the first env key varies slowest";
  EXPECT_EQ(jobs[7].env.at("WD"), "0.1");
  for (const auto& j : jobs) {
    EXPECT_TRUE(j.sweep.empty());
    EXPECT_EQ(j.group, "lr");
    // A point is an ordinary job: its stored form reads back the same.
    auto back = job_spec_from_json(job_spec_to_json(j)).value();
    EXPECT_EQ(back.group, "lr");
    EXPECT_EQ(back.env, j.env);
    EXPECT_TRUE(back.sweep.empty());
  }
}

// Issue 42: each point is named with its values (env in the file's order, then its args), and
// keeps them through the store; a job not in a sweep has none, and a submitted spec cannot set
// them.
TEST(Sweep, EachPointCarriesItsValuesAsALabelThatTheStoreKeeps) {
  auto spec = parse_job_spec(std::string(kJob) +
                                 "sweep:\n  env: {LR: [1e-4, 3e-4], WD: [0, 0.1]}\n"
                                 "  args: [\"--seed 1\", \"--seed 2\"]\n",
                             "job.yaml")
                  .value();
  const auto jobs = expand_sweep(spec);
  ASSERT_EQ(jobs.size(), 8u);
  EXPECT_EQ(jobs[0].sweep_point, "LR=1e-4 WD=0 --seed 1");
  EXPECT_EQ(jobs[1].sweep_point, "LR=1e-4 WD=0 --seed 2");
  EXPECT_EQ(jobs[7].sweep_point, "LR=3e-4 WD=0.1 --seed 2");
  const auto back = job_spec_from_json(job_spec_to_json(jobs[7])).value();
  EXPECT_EQ(back.sweep_point, "LR=3e-4 WD=0.1 --seed 2");
  auto env_only = parse_job_spec(std::string(kJob) + "sweep: {env: {LR: [1e-4]}}\n", "j").value();
  EXPECT_EQ(expand_sweep(env_only).at(0).sweep_point, "LR=1e-4");
  auto args_only =
      parse_job_spec(std::string(kJob) + "sweep: {args: [\"--seed 3\"]}\n", "j").value();
  EXPECT_EQ(expand_sweep(args_only).at(0).sweep_point, "--seed 3");
  auto plain = parse_job_spec(kJob, "j").value();
  EXPECT_EQ(expand_sweep(plain).at(0).sweep_point, "");
  EXPECT_FALSE(job_spec_to_json(plain).contains("sweep_point"));
  EXPECT_THAT(error_of("sweep_point: LR=1\n"), HasSubstr("sweep_point"));
}

TEST(Sweep, AJobWithoutASweepIsItselfAndMayNameAGroup) {
  auto spec = parse_job_spec(std::string(kJob) + "group: ablations\n", "j").value();
  auto jobs = expand_sweep(spec);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].name, "lr");
  EXPECT_EQ(jobs[0].group, "ablations");
}

TEST(Sweep, MistakesAreNamedWithWhereAndWhy) {
  EXPECT_THAT(error_of("sweep: {env: {LR: []}}\n"),
              HasSubstr("sweep.env.LR must be a non-empty list, got"));
  EXPECT_THAT(error_of("sweep: {env: {DATA: [a, b]}}\n"),
              HasSubstr("job.yaml:4:15: sweep.env sets DATA, which env sets too"));
  EXPECT_THAT(error_of("sweep: {env: {ORCH_JOB_ID: [1]}}\n"),
              HasSubstr("which orchestrate sets itself"));
  EXPECT_THAT(error_of("sweep: {env: {LR: [[1]]}}\n"), HasSubstr("sweep.env.LR has a list"));
  EXPECT_THAT(error_of("sweep: {}\n"), HasSubstr("sweep gives no values"));
  EXPECT_THAT(error_of("sweep: {grid: 1}\n"), HasSubstr("\"grid\""));
  EXPECT_THAT(error_of("sweep: {env: {A: [1,2,3,4,5,6,7,8], B: [1,2,3,4,5,6,7,8], "
                       "C: [1,2,3,4,5]}}\n"),
              HasSubstr("sweep makes more than 256 jobs"));
  auto long_name =
      parse_job_spec("name: " + std::string(62, 'x') +
                         "\ncommand: x\nsweep: {args: [a, b, c, d, e, f, g, h, i, j]}\n",
                     "job.yaml");
  ASSERT_FALSE(long_name.ok());
  EXPECT_THAT(long_name.error().message, HasSubstr("is too long for a sweep of 10 points"));
}

}  // namespace
}  // namespace orch
