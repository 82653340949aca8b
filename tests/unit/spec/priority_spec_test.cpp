// What a job spec's priority and preemption settings and the clusters file's priority_classes
// and teams accept, and how each mistake is worded (issue 18).
#include <gmock/gmock.h>

#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"
#include "scheduler/spec/scheduling_section.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

constexpr const char* kJob = "name: run\ncommand: python train.py\n";

std::string error_of(const std::string& yaml) {
  auto r = parse_job_spec(yaml, "job.yaml");
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

TEST(PrioritySpec, ByDefaultAJobHasPriorityZeroAndMayBePreemptedAfterFiveMinutesWithUSR1) {
  auto spec = parse_job_spec(kJob, "job.yaml").value();
  EXPECT_EQ(spec.priority, 0);
  EXPECT_EQ(spec.priority_class, "");
  EXPECT_TRUE(spec.preemption.allowed);
  EXPECT_EQ(spec.preemption.signal, "USR1");
  EXPECT_EQ(spec.preemption.grace_s, 300);
}

TEST(PrioritySpec, APriorityIsAnIntegerOrAClassName) {
  EXPECT_EQ(parse_job_spec(std::string(kJob) + "priority: 500\n", "j").value().priority, 500);
  EXPECT_EQ(parse_job_spec(std::string(kJob) + "priority: -3\n", "j").value().priority, -3);
  auto named = parse_job_spec(std::string(kJob) + "priority: hero\n", "j").value();
  EXPECT_EQ(named.priority_class, "hero");
  EXPECT_THAT(error_of(std::string(kJob) + "priority: 2000000\n"),
              HasSubstr("job.yaml:3:11: \"priority\" must be from -1000000 to 1000000"));
  EXPECT_THAT(error_of(std::string(kJob) + "priority: [1]\n"),
              HasSubstr("\"priority\" must be an integer or a class name, got a list"));
  EXPECT_THAT(error_of(std::string(kJob) + "priority: hero\npriority_class: ablation\n"),
              HasSubstr("\"priority\" names class hero but \"priority_class\" names ablation"));
}

TEST(PrioritySpec, PreemptionSettingsAreReadAndCheckedAndSurviveTheStoredForm) {
  auto spec = parse_job_spec(std::string(kJob) +
                                 "priority: ablation\npreemption: {signal: SIGUSR2, grace_s: 45, "
                                 "allowed: false}\n",
                             "j")
                  .value();
  spec.priority = 100;  // what the brain resolves the class to
  EXPECT_EQ(spec.preemption.signal, "USR2");
  EXPECT_EQ(spec.preemption.grace_s, 45);
  EXPECT_FALSE(spec.preemption.allowed);
  auto back = job_spec_from_json(job_spec_to_json(spec)).value();
  EXPECT_EQ(back.priority, 100);
  EXPECT_EQ(back.priority_class, "ablation");
  EXPECT_EQ(back.preemption.signal, "USR2");
  EXPECT_EQ(back.preemption.grace_s, 45);
  EXPECT_FALSE(back.preemption.allowed);

  EXPECT_THAT(error_of(std::string(kJob) + "preemption: {signal: TERM}\n"),
              HasSubstr("preemption.signal must be a signal the agent passes on to the job, got "
                        "\"TERM\"; expected USR1, USR2, INT or HUP"));
  EXPECT_THAT(error_of(std::string(kJob) + "preemption: {grace_s: -1}\n"),
              HasSubstr("\"grace_s\" must be"));
  EXPECT_THAT(error_of(std::string(kJob) + "preemption: {grace: 10}\n"),
              HasSubstr("unknown key \"grace\" in preemption; expected one of: allowed, signal, "
                        "grace_s"));
}

TEST(PrioritySpec, ATimeLimitIsSecondsOrADurationWithAUnitAndSurvivesTheStoredForm) {
  EXPECT_FALSE(parse_job_spec(kJob, "j").value().time_limit_s);
  const auto limit = [](const std::string& value) {
    return parse_job_spec(std::string(kJob) + "time_limit: " + value + "\n", "j")
        .value()
        .time_limit_s.value_or(-1);
  };
  EXPECT_EQ(limit("3600"), 3600);
  EXPECT_EQ(limit("\"90m\""), 5400);
  EXPECT_EQ(limit("2h"), 7200);
  EXPECT_EQ(limit("1.5d"), 129600);
  EXPECT_EQ(limit("45s"), 45);
  auto spec = parse_job_spec(std::string(kJob) + "time_limit: 2h\n", "j").value();
  EXPECT_EQ(spec.time_limit_ms(), 7'200'000);
  EXPECT_EQ(job_spec_from_json(job_spec_to_json(spec)).value().time_limit_s, 7200);

  EXPECT_THAT(error_of(std::string(kJob) + "time_limit: 2w\n"),
              HasSubstr("job.yaml:3:13: \"time_limit\" must be a duration, got"));
  EXPECT_THAT(error_of(std::string(kJob) + "time_limit: 2w\n"),
              HasSubstr("expected seconds such as 3600, or a duration such as \"90m\""));
  EXPECT_THAT(error_of(std::string(kJob) + "time_limit: 0\n"),
              HasSubstr("\"time_limit\" must be from 1 second to 365 days, got 0 s"));
  EXPECT_THAT(error_of(std::string(kJob) + "time_limit: 400d\n"),
              HasSubstr("must be from 1 second to 365 days, got 34560000 s"));
  EXPECT_THAT(error_of(std::string(kJob) + "time_limit: [1]\n"),
              HasSubstr("\"time_limit\" must be a duration, got a list"));
  EXPECT_THAT(error_of(std::string(kJob) + "time_limit: h\n"), HasSubstr("must be a duration"));
}

TEST(PrioritySpec, TheExpectedRunIsADurationUnderPlacementAndSurvivesTheStoredForm) {
  EXPECT_FALSE(parse_job_spec(kJob, "j").value().expected_run_s);
  auto spec = parse_job_spec(std::string(kJob) + "placement: {expected_run: 30d}\n", "j").value();
  EXPECT_EQ(spec.expected_run_s, 30 * 86400.0);
  EXPECT_EQ(job_spec_from_json(job_spec_to_json(spec)).value().expected_run_s, 30 * 86400.0);
  EXPECT_EQ(parse_job_spec(std::string(kJob) + "placement: {expected_run: 7200}\n", "j")
                .value()
                .expected_run_s,
            7200);
  EXPECT_THAT(error_of(std::string(kJob) + "placement: {expected_run: soon}\n"),
              HasSubstr("job.yaml:3:27: \"expected_run\" must be a duration, got"));
  EXPECT_THAT(error_of(std::string(kJob) + "placement: {expected_run: 2y}\n"),
              HasSubstr("expected seconds such as 3600, or a duration such as \"90m\""));
  EXPECT_THAT(error_of(std::string(kJob) + "placement: {expected_run: -5}\n"),
              HasSubstr("\"expected_run\" must be from 1 second to 365 days, got -5 s"));
}

TEST(PrioritySpec, MaxQueueSecondsDefaultsToFiveMinutesAndIsChecked) {
  EXPECT_EQ(parse_job_spec(kJob, "j").value().max_queue_s, 300);
  auto spec = parse_job_spec(std::string(kJob) + "placement: {max_queue_s: 45}\n", "j").value();
  EXPECT_EQ(spec.max_queue_s, 45);
  EXPECT_EQ(job_spec_from_json(job_spec_to_json(spec)).value().max_queue_s, 45);
  EXPECT_THAT(error_of(std::string(kJob) + "placement: {max_queue_s: -1}\n"),
              HasSubstr("\"max_queue_s\" must be"));
}

constexpr const char* kClusters = "clusters:\n  - {name: alpha, provider: local}\n";

// The message a clusters file of one cluster and `tail` is refused with.
std::string error(const std::string& tail) {
  auto r = parse_clusters_file(std::string(kClusters) + tail, "clusters.yaml");
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

TEST(PrioritySpec, TheClustersFileNamesPriorityClasses) {
  auto file = parse_clusters_file(std::string(kClusters) +
                                      "priority_classes: {hero: 1000, production: 500, "
                                      "ablation: 100}\n",
                                  "clusters.yaml")
                  .value();
  EXPECT_EQ(file.scheduling.priority_classes.at("hero"), 1000);
  EXPECT_EQ(file.scheduling.priority_classes.size(), 3u);
  std::string why;
  EXPECT_EQ(resolve_priority(file.scheduling, "production", why), 500);
  EXPECT_FALSE(resolve_priority(file.scheduling, "prod", why));
  EXPECT_THAT(why, HasSubstr("known classes: ablation (100), hero (1000), production (500)"));

  EXPECT_THAT(error("priority_classes: {hero: high}\n"),
              HasSubstr("clusters.yaml:3:26: priority class \"hero\" must be an integer from "
                        "-1000000 to 1000000, got \"high\""));
  EXPECT_THAT(error("priority_classes: {\"12\": 5}\n"), HasSubstr("and not a number"));
  EXPECT_THAT(error("priority_classes: [hero]\n"),
              HasSubstr("\"priority_classes\" must be a map, got a list"));
  EXPECT_THAT(error("priority_clases: {}\n"), HasSubstr("did you mean \"priority_classes\""));
}

TEST(PrioritySpec, TheClustersFileGivesTeamsQuotasFleetWideAndPerCluster) {
  auto file = parse_clusters_file(std::string(kClusters) +
                                      "teams:\n  vision: {gpus: 64, clusters: {alpha: 32}}\n"
                                      "  nlp: {clusters: {alpha: 8}, borrow: false}\n",
                                  "clusters.yaml")
                  .value();
  ASSERT_TRUE(file.scheduling.quotas());
  const TeamQuota& vision = file.scheduling.teams.at("vision");
  EXPECT_EQ(vision.gpus, 64);
  EXPECT_EQ(vision.cluster_gpus.at("alpha"), 32);
  EXPECT_TRUE(vision.borrow);
  const TeamQuota& nlp = file.scheduling.teams.at("nlp");
  EXPECT_FALSE(nlp.gpus.has_value());
  EXPECT_FALSE(nlp.borrow);
  EXPECT_FALSE(parse_clusters_file(kClusters, "c").value().scheduling.quotas());

  EXPECT_THAT(error("teams:\n  vision: {clusters: {alpah: 8}}\n"),
              HasSubstr("clusters.yaml:4:23: team \"vision\" gives a quota on \"alpah\", which is "
                        "not a cluster of this file (did you mean \"alpha\"?)"));
  EXPECT_THAT(error("teams:\n  vision: {}\n"),
              HasSubstr("team \"vision\" gives no quota; expected \"gpus\" (fleet-wide)"));
  EXPECT_THAT(error("teams:\n  vision: {gpus: -1}\n"), HasSubstr("\"gpus\" must be"));
  EXPECT_THAT(error("teams:\n  vision: {gpus: 8, cpus: 4}\n"), HasSubstr("\"cpus\""));
  EXPECT_THAT(error("teams:\n  vision: {clusters: {alpha: lots}}\n"),
              HasSubstr("the quota on alpha must be a whole number of GPUs"));
  EXPECT_THAT(error("teams: [vision]\n"), HasSubstr("\"teams\" must be a map, got a list"));
}

}  // namespace
}  // namespace orch
